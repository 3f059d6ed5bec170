import { GraphQLID, GraphQLNonNull, type GraphQLFieldConfig, type GraphQLFieldConfigArgumentMap, type GraphQLFieldConfigMap, type GraphQLInputObjectType, type GraphQLObjectType } from 'graphql';
import { withIndefiniteArticle } from '../schema/indefinite-article.js';
import type { ResourceModel } from '../schema/schema-model.js';
import type { GraphqlContext } from './graphql-context.js';
import { keyOfArgs } from './schema-parts.js';
import { withUploads, type WriteMutationExtension } from './upload-inputs.js';

/**
 * The mutations of a resource with rows by id: `create<Type>`, `update<Type>`, `replace<Type>`
 * and `delete<Type>`, calling the same core operations as REST's POST, PATCH, PUT and DELETE. Their
 * inputs' file fields take uploads (upload-inputs.ts). `key` names the row to change: `id`, or a
 * mapped table's key fields (schema-parts.ts keyArgs).
 */
export function resourceMutations(
  resource: ResourceModel,
  t: { object: GraphQLObjectType; createInput: GraphQLInputObjectType | undefined; updateInput: GraphQLInputObjectType | undefined },
  key: GraphQLFieldConfigArgumentMap,
): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  const typeName = resource.typeName;
  const mutation: GraphQLFieldConfigMap<unknown, GraphqlContext> = {};
  mutation[`create${typeName}`] = {
    type: t.object,
    description: `Creates ${withIndefiniteArticle(resource.singular)}.`,
    // A resource without writable fields is created without input.
    args: t.createInput === undefined ? {} : { input: { type: new GraphQLNonNull(t.createInput) } },
    extensions: writes(resource, 'create'),
    resolve: (_root, args: { input?: Record<string, unknown> }, ctx) =>
      withUploads(resource, args.input ?? {}, undefined, (body, files) => ctx.operations.create(ctx.operation, resource, body, files)),
  };
  // Nothing to change or replace in a resource without writable fields.
  if (t.createInput !== undefined && t.updateInput !== undefined) {
    mutation[`update${typeName}`] = {
      type: t.object,
      description: `Changes only the given fields of ${withIndefiniteArticle(resource.singular)} (null clears a field).`,
      args: { ...key, input: { type: new GraphQLNonNull(t.updateInput) } },
      extensions: writes(resource, 'update'),
      resolve: (_root, args: { input: Record<string, unknown> }, ctx) => {
        const id = keyOfArgs(resource, args);
        // A json field given a value is set to it (GraphQL has no merge-patch reading of objects).
        return withUploads(resource, args.input, id, (body, files) => ctx.operations.update(ctx.operation, resource, id, body, { mergeJson: false, ...files }));
      },
    };
    mutation[`replace${typeName}`] = {
      type: t.object,
      description: `Replaces every field of ${withIndefiniteArticle(resource.singular)}; fields left out take their defaults or become null.`,
      args: { ...key, input: { type: new GraphQLNonNull(t.createInput) } },
      extensions: writes(resource, 'replace'),
      resolve: (_root, args: { input: Record<string, unknown> }, ctx) => {
        const id = keyOfArgs(resource, args);
        return withUploads(resource, args.input, id, (body, files) => ctx.operations.replace(ctx.operation, resource, id, body, files));
      },
    };
  }
  mutation[`delete${typeName}`] = deleteMutation(resource, key);
  return mutation;
}

/** The extension naming what a write mutation writes (read by GraphQL multipart requests). */
export function writes(resource: ResourceModel, kind: WriteMutationExtension['kind']): { restgraphWrite: WriteMutationExtension } {
  return { restgraphWrite: { resource, kind } };
}

/** `delete<Type>(id)`: deletes a row (and those its references cascade to), returning its id (a mapped table's: its key in its URL form). */
function deleteMutation(resource: ResourceModel, key: GraphQLFieldConfigArgumentMap): GraphQLFieldConfig<unknown, GraphqlContext, Record<string, unknown>> {
  return {
    type: GraphQLID,
    description: `Deletes ${withIndefiniteArticle(resource.singular)} (with the rows its references cascade to); returns its id.`,
    args: key,
    resolve: async (_root, args, ctx) => {
      const id = keyOfArgs(resource, args);
      await ctx.operations.delete(ctx.operation, resource, id);
      return id;
    },
  };
}
