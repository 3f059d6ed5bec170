import { GraphQLBoolean, GraphQLID, GraphQLNonNull, GraphQLObjectType, GraphQLString, type GraphQLEnumType, type GraphQLFieldConfigArgumentMap, type GraphQLScalarType } from 'graphql';
import type { ListQuery } from '../core/list-query.js';
import { NotFoundError } from '../errors.js';
import { fieldNamed, type FieldModel, type ResourceModel } from '../schema/schema-model.js';
import type { QueryOperator, StoredRecord } from '../store/list-spec.js';
import type { GraphqlContext } from './graphql-context.js';
import { hasIdKey, keyFields, parseRecordId, recordId, type RecordId } from '../schema/record-key.js';

/** Pieces of the generated schema: names, descriptions, ids, inputs and connection objects. */

/** A connection object from a page: edges with cursors, page info, and the total count when asked. */
export function connectionOf(
  ctx: GraphqlContext,
  resource: ResourceModel,
  query: ListQuery,
  records: StoredRecord[],
  more: boolean,
  total: () => Promise<number>,
): Record<string, unknown> {
  const backward = query.backward === true;
  const edges = records.map((node) => ({
    node,
    get cursor(): string {
      return ctx.operations.cursorOf(resource, query.sort, node);
    },
  }));
  return {
    edges,
    nodes: records,
    pageInfo: {
      hasNextPage: backward ? false : more,
      hasPreviousPage: backward ? more : false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    totalCount: total,
  };
}

/** A GraphQL ID naming a row: the REST id's decimal digits. Anything else names no row (404). */
export function idOf(resource: ResourceModel, id: string): RecordId {
  if (!hasIdKey(resource)) {
    // A mapped table's key, as in its REST path: `FR`, a uuid, `1,23` for a composite key.
    const key = parseRecordId(resource, id);
    if (key !== undefined) return key;
    throw new NotFoundError(`There is no ${resource.singular} with key ${id.slice(0, 80)} (its key: ${keyFields(resource).join(', ')}).`);
  }
  if (/^[1-9]\d{0,15}$/.test(id)) {
    const n = Number(id);
    if (Number.isSafeInteger(n)) return n;
  }
  throw new NotFoundError(`There is no ${resource.singular} with id ${id.slice(0, 40)}.`);
}

/**
 * The arguments naming one row: `id` on the resources restgraph creates, one required argument per
 * key field (typed as the field) on a mapped table's: `filmActor(actor_id: 1, film_id: 23)`.
 */
export function keyArgs(resource: ResourceModel, scalarOf: (field: FieldModel) => GraphQLScalarType | GraphQLEnumType): GraphQLFieldConfigArgumentMap {
  if (hasIdKey(resource)) return { id: { type: new GraphQLNonNull(GraphQLID) } };
  return Object.fromEntries(keyFields(resource).map((name) => [name, { type: new GraphQLNonNull(scalarOf(fieldNamed(resource, name))), description: `The ${name} of the ${resource.singular} (part of its key).` }]));
}

/** The row that {@link keyArgs} name. @throws NotFoundError when they name none (a key part out of its field's range). */
export function keyOfArgs(resource: ResourceModel, args: Readonly<Record<string, unknown>>): RecordId {
  if (hasIdKey(resource)) return idOf(resource, String(args.id));
  const key = recordId(resource, args);
  if (key !== undefined) return key;
  const given = keyFields(resource).map((name) => `${name} ${JSON.stringify(String(args[name]).slice(0, 80))}`).join(', ');
  throw new NotFoundError(`There is no ${resource.singular} with ${given}.`);
}

/**
 * A mutation input as the core's JSON body: reference fields (GraphQL IDs) become the numbers REST
 * takes; a reference that is not a number is passed on as given, for the validator to name.
 */
export function bodyOf(resource: ResourceModel, input: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    const field = resource.fields.get(name);
    body[name] = field?.references !== undefined && typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value;
  }
  return body;
}

export function describe(field: FieldModel): { description?: string } {
  const parts: string[] = [];
  if (field.description !== undefined) parts.push(field.description);
  const rules: string[] = [];
  if (field.unique && !field.system) rules.push('unique');
  if (field.minLength !== undefined) rules.push(`at least ${field.minLength} characters`);
  if (field.maxLength !== undefined) rules.push(`at most ${field.maxLength} characters`);
  if (field.min !== undefined) rules.push(`at least ${field.min}`);
  if (field.max !== undefined) rules.push(`at most ${field.max}`);
  if (field.pattern !== undefined) rules.push(`matches ${field.pattern}`);
  if (field.format !== undefined) rules.push(`format ${field.format}`);
  if (field.type === 'enum' && field.values !== undefined) rules.push(`one of ${field.values.join(', ')}`);
  if (field.default !== undefined) rules.push(`default ${JSON.stringify(field.default)}`);
  if (field.references !== undefined) rules.push(`refers to ${field.references}`);
  if (rules.length > 0) parts.push(`(${rules.join('; ')})`);
  return parts.length === 0 ? {} : { description: parts.join(' ') };
}

export const OPERATOR_DESCRIPTIONS: Record<QueryOperator, string> = {
  eq: 'Equal to.',
  ne: 'Not equal to (null fields count as not equal).',
  lt: 'Less than.',
  lte: 'Less than or equal to.',
  gt: 'Greater than.',
  gte: 'Greater than or equal to.',
  in: 'Any of these values.',
  contains: 'Contains this text (case-sensitive).',
  startsWith: 'Starts with this text (case-sensitive).',
  isNull: 'Whether the field is null.',
};

export function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

export function camel(name: string): string {
  const p = pascal(name);
  return p.charAt(0).toLowerCase() + p.slice(1);
}

/** `createdAt` → `CREATED_AT`. */
export function constantCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
}

/** The `PageInfo` type of connections (Relay): where a page lies in its list. */
export function pageInfoType(): GraphQLObjectType {
  return new GraphQLObjectType({
    name: 'PageInfo',
    description: 'Where a page lies in its list (Relay cursor connections).',
    fields: {
      hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      startCursor: { type: GraphQLString },
      endCursor: { type: GraphQLString },
    },
  });
}
