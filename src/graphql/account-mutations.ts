import { GraphQLBoolean, GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLFieldConfigMap, type GraphQLInputObjectType } from 'graphql';
import type { AccountEmails } from '../core/accounts/account-emails.js';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import { InternalError } from '../errors.js';
import type { AccountsModel } from '../schema/accounts-model.js';
import type { ResourceModel } from '../schema/schema-model.js';
import type { GraphqlContext } from './graphql-context.js';
import { bodyOf } from './schema-parts.js';

const NON_NULL_STRING = new GraphQLNonNull(GraphQLString);

function emailsOf(ctx: GraphqlContext): AccountEmails {
  const emails = ctx.accountEmails;
  if (emails === undefined) throw new InternalError({ cause: new Error('email mutations without account emails') });
  return emails;
}

function accountsOf(ctx: GraphqlContext): AccountOperations {
  const accounts = ctx.accounts;
  // Built only for a schema with accounts, whose service always has them.
  if (accounts === undefined) throw new InternalError({ cause: new Error('account mutations without accounts') });
  return accounts;
}

/**
 * The account mutations (docs/accounts.md), named as the REST routes under /v1/auth/: `signUp`,
 * `signIn`, `refresh`, `signOut`, `signOutEverywhere`, `changePassword`, `requestEmailVerification`,
 * `verifyEmail`, `forgotPassword`, `resetPassword`; each calls the same
 * core operation. `user` is the account's record type.
 */
export function accountMutations(accounts: AccountsModel, resource: ResourceModel, user: GraphQLObjectType, createInput: GraphQLInputObjectType | undefined): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  const session = new GraphQLObjectType({
    name: 'AuthSession',
    description: 'A session: a short-lived access token (a JWT signed by this server) and a single-use refresh token.',
    fields: {
      accessToken: { type: NON_NULL_STRING },
      tokenType: { type: NON_NULL_STRING },
      expiresIn: { type: new GraphQLNonNull(GraphQLInt), description: 'Seconds the access token lives.' },
      refreshToken: { type: NON_NULL_STRING },
      user: { type: user, description: "The account's record as the resource's read rules show it to its own user." },
    },
  });
  const identifier = accounts.identifier;
  return {
    signUp: {
      type: user,
      description:
        accounts.emailVerification === 'required'
          ? `Starts a sign-up by email: ${identifier}, password and profile fields (only those its own user may write). Null for a new and a taken ${identifier} alike (the message sent says which); an admin gets the account.`
          : `Creates an account: ${identifier}, password and profile fields (only those its own user may write).`,
      args: { password: { type: NON_NULL_STRING }, ...(createInput === undefined ? {} : { input: { type: new GraphQLNonNull(createInput) } }) },
      resolve: (_root, args: { password: string; input?: Record<string, unknown> }, ctx) =>
        accountsOf(ctx).signUp(ctx.operation, { ...bodyOf(resource, args.input ?? {}), password: args.password }),
    },
    signIn: {
      type: session,
      description: `Signs in with ${identifier} and password (the same error for an unknown ${identifier} and a wrong password).`,
      args: { [identifier]: { type: NON_NULL_STRING }, password: { type: NON_NULL_STRING } },
      resolve: (_root, args: Record<string, string>, ctx) => accountsOf(ctx).signIn(ctx.operation, args),
    },
    refresh: {
      type: session,
      description: 'Exchanges a refresh token for new tokens; a used one presented again ends its session.',
      args: { refreshToken: { type: NON_NULL_STRING } },
      resolve: (_root, args: { refreshToken: string }, ctx) => accountsOf(ctx).refresh(ctx.operation, args),
    },
    signOut: {
      type: GraphQLBoolean,
      description: 'Ends the session of a refresh token.',
      args: { refreshToken: { type: NON_NULL_STRING } },
      resolve: async (_root, args: { refreshToken: string }, ctx) => {
        await accountsOf(ctx).signOut(args);
        return true;
      },
    },
    signOutEverywhere: {
      type: GraphQLBoolean,
      description: "Ends every session of the caller's account (an account's access token).",
      resolve: async (_root, _args, ctx) => {
        await accountsOf(ctx).signOutEverywhere(ctx.operation.principal);
        return true;
      },
    },
    changePassword: {
      type: GraphQLBoolean,
      description: "Changes the caller's password, given the current one; every other session ends.",
      args: { currentPassword: { type: NON_NULL_STRING }, newPassword: { type: NON_NULL_STRING } },
      resolve: async (_root, args: { currentPassword: string; newPassword: string }, ctx) => {
        await accountsOf(ctx).changePassword(ctx.operation.principal, args);
        return true;
      },
    },
    requestEmailVerification: {
      type: GraphQLBoolean,
      description: `Sends a verification link to the account with this ${identifier} if it has one and is not verified; true in every case (no answer tells whether an account exists).`,
      args: { [identifier]: { type: NON_NULL_STRING } },
      resolve: async (_root, args: Record<string, string>, ctx) => {
        await emailsOf(ctx).requestVerification(ctx.operation, args);
        return true;
      },
    },
    verifyEmail: {
      type: GraphQLBoolean,
      description: "Confirms an account's email with the token of its verification link (single use).",
      args: { token: { type: NON_NULL_STRING } },
      resolve: async (_root, args: { token: string }, ctx) => {
        await emailsOf(ctx).verifyEmail(ctx.operation, args);
        return true;
      },
    },
    forgotPassword: {
      type: GraphQLBoolean,
      description: `Sends a password-reset link to the account with this ${identifier}, if there is one; true in every case.`,
      args: { [identifier]: { type: NON_NULL_STRING } },
      resolve: async (_root, args: Record<string, string>, ctx) => {
        await emailsOf(ctx).forgotPassword(ctx.operation, args);
        return true;
      },
    },
    resetPassword: {
      type: GraphQLBoolean,
      description: "Sets a new password with the token of a reset link (single use); every session of the account ends.",
      args: { token: { type: NON_NULL_STRING }, newPassword: { type: NON_NULL_STRING } },
      resolve: async (_root, args: { token: string; newPassword: string }, ctx) => {
        await emailsOf(ctx).resetPassword(ctx.operation, args);
        return true;
      },
    },
  };
}
