import type { SchemaProblem } from '../errors.js';
import type { ResourceModel } from './schema-model.js';

/** Who may sign up (docs/accounts.md#sign-up). */
export type SignUpPolicy = 'open' | 'closed' | 'invite';

/** Whether an account must verify its email before it signs in with a password (docs/accounts.md#sign-up-without-enumeration). */
export type EmailVerificationPolicy = 'optional' | 'required';

/** `accounts:` as written at the top level of a schema file. */
export interface AccountsDefinition {
  /** The resource whose records are the accounts (their fields are the profile). */
  resource: string;
  /** The unique string field users sign in with (`email`). */
  identifier: string;
  /** `open`: anyone; `invite`: admins only (for now); `closed`: nobody. @default open */
  signUp?: SignUpPolicy;
  /** Fields of the resource copied into access tokens, read by rules as `@auth.claims.<name>`. */
  claims?: string[];
  /** `required`: sign-up answers alike for new and taken identifiers, and sign-in waits for a verified email. @default optional */
  emailVerification?: EmailVerificationPolicy;
  /** A filter expression over the account's record (`role = 'admin'`): when it holds at sign-in or refresh, the token has the admin scope. */
  admin?: string;
}

/** The compiled `accounts:` section. */
export interface AccountsModel {
  resource: string;
  identifier: string;
  signUp: SignUpPolicy;
  claims: readonly string[];
  emailVerification: EmailVerificationPolicy;
  /** The `admin` filter expression as written (checked and compiled by core/accounts/admin-accounts.ts). */
  admin?: string;
}

/**
 * Names a claim of an access token may not take: those restgraph sets itself (RFC 7519, section
 * 4.1, and `sid`, `scope`), which a profile field must not overwrite.
 */
export const RESERVED_CLAIMS: readonly string[] = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'sid', 'scope', 'kind'];

/** Checks `accounts:` against the compiled resources. */
export function compileAccounts(definition: AccountsDefinition | undefined, resources: ReadonlyMap<string, ResourceModel>, problems: SchemaProblem[]): AccountsModel | undefined {
  if (definition === undefined) return undefined;
  const resource = resources.get(definition.resource);
  if (resource === undefined) {
    problems.push({ path: 'accounts.resource', message: `unknown resource "${definition.resource}"` });
    return undefined;
  }
  if (resource.singleton) problems.push({ path: 'accounts.resource', message: `${resource.name} is a singleton; accounts need a resource of many records` });
  const identifier = resource.fields.get(definition.identifier);
  if (identifier === undefined || identifier.system) {
    problems.push({ path: 'accounts.identifier', message: `"${definition.identifier}" is not a declared field of ${resource.name}` });
  } else if (identifier.type !== 'string' || !identifier.unique) {
    problems.push({ path: 'accounts.identifier', message: `${resource.name}.${identifier.name} must be a unique string field (type: string, unique: true)` });
  }
  const claims = definition.claims ?? [];
  claims.forEach((claim, index) => {
    if (!resource.fields.has(claim)) problems.push({ path: `accounts.claims.${index}`, message: `"${claim}" is not a field of ${resource.name}` });
    else if (RESERVED_CLAIMS.includes(claim)) problems.push({ path: `accounts.claims.${index}`, message: `"${claim}" is a claim restgraph sets itself; choose another field` });
  });
  if (new Set(claims).size !== claims.length) problems.push({ path: 'accounts.claims', message: 'lists a field twice' });
  const emailVerification = definition.emailVerification ?? 'optional';
  if (emailVerification === 'required' && identifier !== undefined && identifier.format !== 'email') {
    problems.push({ path: 'accounts.emailVerification', message: `required needs an email identifier: ${resource.name}.${identifier.name} has no format: email` });
  }
  return Object.freeze({ resource: resource.name, identifier: definition.identifier, signUp: definition.signUp ?? 'open', claims: Object.freeze([...claims]), emailVerification, ...(definition.admin === undefined ? {} : { admin: definition.admin }) });
}
