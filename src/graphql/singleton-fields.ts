import { GraphQLNonNull, type GraphQLFieldConfigMap, type GraphQLInputObjectType, type GraphQLObjectType } from 'graphql';
import { SINGLETON_ID, type ResourceModel } from '../schema/schema-model.js';
import type { GraphqlContext } from './graphql-context.js';
import { camel } from './schema-parts.js';
import { writes } from './resource-mutations.js';
import { withUploads } from './upload-inputs.js';

/**
 * The GraphQL fields of a singleton resource (`singleton: true`, one record): the query field
 * `profile` and the mutations `updateProfile` and `replaceProfile`, without ids; no list, create
 * or delete. They call the same core operations as REST's GET, PATCH and PUT on `/profile`.
 */
/** A singleton's query field (`profile`): its one record, without arguments. */
export function singletonQuery(resource: ResourceModel, object: GraphQLObjectType): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  return {
    [camel(resource.singular)]: {
      type: object,
      description: `The ${resource.singular} (null, with a not-found error, when it has none yet).`,
      resolve: (_root, _args, ctx) => ctx.operations.get(ctx.operation, resource, SINGLETON_ID),
    },
  };
}

/** A singleton's mutations: `update<Type>` and `replace<Type>` (which creates it when it has none), without ids; none without writable fields. */
export function singletonMutations(resource: ResourceModel, t: { object: GraphQLObjectType; createInput: GraphQLInputObjectType | undefined; updateInput: GraphQLInputObjectType | undefined }): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  // A singleton without writable fields has nothing to change.
  if (t.createInput === undefined || t.updateInput === undefined) return {};
  return {
    [`update${resource.typeName}`]: {
      type: t.object,
      description: `Changes only the given fields of the ${resource.singular} (null clears a field).`,
      args: { input: { type: new GraphQLNonNull(t.updateInput) } },
      extensions: writes(resource, 'update'),
      resolve: (_root, args: { input: Record<string, unknown> }, ctx) =>
        withUploads(resource, args.input, SINGLETON_ID, (body, files) => ctx.operations.update(ctx.operation, resource, SINGLETON_ID, body, { mergeJson: false, ...files })),
    },
    [`replace${resource.typeName}`]: {
      type: t.object,
      description: `Replaces every field of the ${resource.singular}, creating it when it has none yet.`,
      args: { input: { type: new GraphQLNonNull(t.createInput) } },
      extensions: writes(resource, 'replace'),
      resolve: (_root, args: { input: Record<string, unknown> }, ctx) =>
        withUploads(resource, args.input, SINGLETON_ID, (body, files) => ctx.operations.replace(ctx.operation, resource, SINGLETON_ID, body, files)),
    },
  };
}
