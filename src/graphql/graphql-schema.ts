import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLEnumValueConfigMap,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
} from 'graphql';
import { filledFromCredential } from '../core/access-rules/write-access.js';
import { filterLimitsOf, structuredListQuery, type ListLimits, type ListQuery, type StructuredListInput } from '../core/list-query.js';
import { fieldNamed, resourceNamed, searchableFields, type FieldModel, type RelationModel, type ResourceModel, type SchemaModel, canonicalFields } from '../schema/schema-model.js';
import type { FilterCondition, QueryOperator, SortKey, StoredRecord } from '../store/list-spec.js';
import { aggregateTypesOf, relationAggregateField, rootAggregateField, type AggregateTypes } from './aggregate-fields.js';
import { resourcesIn, viewOf } from '../schema/version-view.js';
import { singletonMutations, singletonQuery } from './singleton-fields.js';
import { resourceMutations } from './resource-mutations.js';
import { fileInputField } from './upload-inputs.js';
import { accountMutations } from './account-mutations.js';
import { subscriptionFields } from './subscriptions.js';
import type { GraphqlContext } from './graphql-context.js';
import { camel, connectionOf, constantCase, describe, keyArgs, keyOfArgs, pageInfoType } from './schema-parts.js';
import { DateScalar } from './scalars.js';
import { DEFAULT_PAGE_SIZE } from './operation-cost.js';
import { FieldTypes } from './field-types.js';
import { conditionOfWhere, WhereTypes, type WhereInput, type WhereReading } from './where-input.js';
import { restrictedFieldResolver } from './field-reads.js';
import { hiddenFieldError, readRestricted } from '../core/access-rules/field-reads.js';
import type { RecordId } from '../schema/record-key.js';
import { belongsToKeyOf, relationJoin } from '../schema/relation-keys.js';


/** The arguments that choose rows: what list, connection and aggregate fields all take. */
interface RowArgs {
  filter?: Record<string, Record<string, unknown> | null> | null;
  /** Conditions as a tree (and/or/not, relation paths), translated by where-input.ts. */
  where?: WhereInput | null;
}

/** What the root and relation list fields take: Relay's paging arguments plus filter and sort. */
interface ListArgs extends RowArgs {
  sort?: readonly string[] | null;
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  /** Full-text search (root list fields of resources with searchable fields). */
  search?: string | null;
}

interface TypesOfResource {
  object: GraphQLObjectType;
  connection: GraphQLObjectType;
  filter: GraphQLInputObjectType;
  sort: GraphQLEnumType;
  /** Undefined when the resource has no writable field (GraphQL allows no empty input type). */
  createInput: GraphQLInputObjectType | undefined;
  updateInput: GraphQLInputObjectType | undefined;
  /** Sort enum value → sort key. */
  sortKeys: Map<string, SortKey>;
  aggregate: AggregateTypes;
}

/**
 * The GraphQL schema of a resource schema: for each resource (`users`, type `User`) the queries
 * `user(id)`, `users(...)` and `usersConnection(...)`, relation fields with the same arguments,
 * and the mutations `createUser`, `updateUser`, `replaceUser`, `deleteUser`. Every resolver calls
 * the core operations (so access rules, validation and errors are the REST API's); relation fields
 * load through the request's batch loaders (no query per parent).
 *
 * Top-level lists return `limits.defaultLimit` rows without first/last, relation lists the smaller
 * `relationPageSize` (see relationPageSizeOf in query-limits.ts): nested lists multiply, and a query nesting
 * three levels of default pages stays within the cost limit. Each list field keeps its default in
 * its extensions ({@link DEFAULT_PAGE_SIZE}), where the cost reads it, and says it in its description.
 */
export function buildGraphqlSchema(model: SchemaModel, limits: ListLimits, relationPageSize: number): GraphQLSchema {
  const types = new Map<string, TypesOfResource>();
  const pageInfo = pageInfoType();

  const typeOf = (resource: ResourceModel): TypesOfResource => {
    const found = types.get(resource.name);
    if (found === undefined) throw new Error(`unknown resource ${resource.name}`);
    return found;
  };

  const fieldTypes = new FieldTypes();
  const scalarOf = (resource: ResourceModel, field: FieldModel): GraphQLScalarType | GraphQLEnumType => fieldTypes.scalarOf(resource, field);
  const filterInputOf = (resource: ResourceModel, field: FieldModel): GraphQLInputObjectType => fieldTypes.filterInputOf(resource, field);

  // GraphQL serves the latest version: its resources and fields, with its deprecations.
  const served = resourcesIn(model, model.latestVersion);
  const latest = (resource: ResourceModel) => viewOf(model, resource, model.latestVersion);
  const shownFields = (resource: ResourceModel) => canonicalFields(resource).filter((f) => latest(resource).apiNameOf.has(f.name));
  const deprecationOf = (resource: ResourceModel, field: FieldModel) => latest(resource).fields.find((v) => v.field === field)?.deprecationReason;
  const whereTypes = new WhereTypes({
    fieldsOf: shownFields,
    relationsOf: (resource) => latest(resource).relations.values(),
    targetOf: (relation) => resourceNamed(model, relation.target),
    scalarOf,
  });
  const whereReading: WhereReading = { resources: model.resources, limits: filterLimitsOf(limits) };

  for (const resource of served) {
    const typeName = resource.typeName;
    const sortKeys = new Map<string, SortKey>();
    const sortValues: GraphQLEnumValueConfigMap = {};
    for (const field of shownFields(resource)) {
      if (field.type === 'json' || field.type === 'file') continue;
      for (const direction of ['asc', 'desc'] as const) {
        const value = `${constantCase(field.name)}_${direction.toUpperCase()}`;
        sortKeys.set(value, { field: field.name, direction });
        sortValues[value] = { value, description: `${field.name}, ${direction === 'asc' ? 'ascending (nulls first)' : 'descending (nulls last)'}` };
      }
    }
    const object: GraphQLObjectType = new GraphQLObjectType({
      name: typeName,
      ...(resource.description === undefined ? {} : { description: resource.description }),
      fields: () => objectFields(resource),
    });
    const connection: GraphQLObjectType = new GraphQLObjectType({
      name: `${typeName}Connection`,
      description: `A page of ${resource.name} (Relay cursor connection).`,
      fields: () => ({
        edges: {
          type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))),
        },
        nodes: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(object))), description: `The ${resource.name} of the page, without cursors.` },
        pageInfo: { type: new GraphQLNonNull(pageInfo) },
        totalCount: {
          type: new GraphQLNonNull(GraphQLInt),
          description: 'How many rows match the filter in all (costs one more query).',
          // Counted only when asked for: the connection carries the count as a function.
          resolve: (connection: { totalCount: () => Promise<number> }) => connection.totalCount(),
        },
      }),
    });
    const edge: GraphQLObjectType = new GraphQLObjectType({
      name: `${typeName}Edge`,
      fields: () => ({
        cursor: { type: new GraphQLNonNull(GraphQLString) },
        node: { type: new GraphQLNonNull(object) },
      }),
    });
    const filter = new GraphQLInputObjectType({
      name: `${typeName}Filter`,
      description: `Conditions on ${resource.name}; all must hold.`,
      fields: () => Object.fromEntries(shownFields(resource).map((f) => [f.name, { type: filterInputOf(resource, f) }])),
    });
    const sort = new GraphQLEnumType({ name: `${typeName}Sort`, values: sortValues });
    const inputFields = (forCreate: boolean): GraphQLInputFieldConfigMap =>
      Object.fromEntries(
        resource.writableFields.filter((field) => latest(resource).apiNameOf.has(field.name)).map((field) => {
          const scalar = scalarOf(resource, field);
          // The owner field and preset fields are filled in from the credential, so they may be left out even when required.
          const required = forCreate && field.required && field.default === undefined && !filledFromCredential(resource, field.name);
          // GraphQL deprecates only optional input fields.
          const reason = deprecationOf(resource, field);
          const deprecated = reason !== undefined && !required ? { deprecationReason: reason } : {};
          const type = field.type === 'file' ? fileInputField(resource, field) : { type: required ? new GraphQLNonNull(scalar) : scalar };
          return [field.name, { ...type, ...describe(field), ...deprecated }];
        }),
      );
    const writable = resource.writableFields.some((field) => latest(resource).apiNameOf.has(field.name));
    const createInput = writable
      ? new GraphQLInputObjectType({ name: `${typeName}CreateInput`, description: `A whole ${resource.singular} (create and replace).`, fields: () => inputFields(true) })
      : undefined;
    const updateInput = writable
      ? new GraphQLInputObjectType({ name: `${typeName}UpdateInput`, description: `Only the fields to change; null clears a field.`, fields: () => inputFields(false) })
      : undefined;
    const aggregate = aggregateTypesOf(resource, shownFields(resource), (field) => scalarOf(resource, field), DateScalar);
    types.set(resource.name, { object, connection, filter, sort, createInput, updateInput, sortKeys, aggregate });
  }

  const listArgs = (resource: ResourceModel, defaultPageSize: number, root = false): GraphQLFieldConfigArgumentMap => {
    const t = typeOf(resource);
    const search: GraphQLFieldConfigArgumentMap = root && searchableFields(resource).length > 0
      ? { search: { type: GraphQLString, description: `Full-text search in ${searchableFields(resource).map((f) => f.name).join(', ')}: every word, the last as a prefix, "quoted phrases"; most relevant first unless sort is given.` } }
      : {};
    return {
      ...search,
      ...rowArgs(resource),
      sort: { type: new GraphQLList(new GraphQLNonNull(t.sort)), description: 'Sort keys in order; id ascending always breaks ties.' },
      first: { type: GraphQLInt, description: `The first n (default ${defaultPageSize}, at most ${limits.maxLimit}).` },
      after: { type: GraphQLString, description: 'Only rows after this cursor.' },
      last: { type: GraphQLInt, description: `The last n (at most ${limits.maxLimit}), in the same order.` },
      before: { type: GraphQLString, description: 'Only rows before this cursor.' },
    };
  };

  /** The arguments that choose rows, of list and aggregate fields alike: a new way of choosing rows goes here and in {@link rowFiltersOf}. */
  const rowArgs = (resource: ResourceModel): GraphQLFieldConfigArgumentMap => ({
    where: { type: whereTypes.of(resource), description: `Conditions on ${resource.name}: and/or/not, relation paths (docs/graphql.md#where).` },
    filter: { type: typeOf(resource).filter, description: 'Conditions on fields, all ANDed (where: says more).' },
  });
  /** The condition of a `where:` argument (none for where: {}). @throws InvalidQueryError */
  const whereOf = (resource: ResourceModel, args: RowArgs): FilterCondition[] => {
    const condition = conditionOfWhere(resource, args.where, whereReading);
    return condition === undefined ? [] : [condition];
  };
  const filterInputsOf = (args: RowArgs): StructuredListInput['filters'] =>
    Object.entries(args.filter ?? {}).flatMap(([field, ops]) => Object.entries(ops ?? {}).map(([op, value]) => ({ field, op: op as QueryOperator, value })));
  /** The checked conditions of {@link rowArgs}. @throws InvalidQueryError */
  const rowFiltersOf = (resource: ResourceModel, args: RowArgs): FilterCondition[] => [
    ...structuredListQuery(resource, { filters: filterInputsOf(args) }, limits).filters,
    ...whereOf(resource, args),
  ];

  const listQueryOf = (resource: ResourceModel, args: ListArgs, defaultPageSize: number): ListQuery => {
    const t = typeOf(resource);
    const input: StructuredListInput = {
      filters: filterInputsOf(args),
      sort: (args.sort ?? []).map((value) => {
        const key = t.sortKeys.get(value);
        if (key === undefined) throw new Error(`unknown sort ${value}`);
        return key;
      }),
      first: args.first ?? null,
      last: args.last ?? null,
      after: args.after ?? null,
      before: args.before ?? null,
      search: args.search ?? null,
    };
    const query = structuredListQuery(resource, input, { ...limits, defaultLimit: defaultPageSize });
    query.filters.push(...whereOf(resource, args));
    return query;
  };

  const relationFields = (resource: ResourceModel, relation: RelationModel): GraphQLFieldConfigMap<StoredRecord, GraphqlContext> => {
    const target = resourceNamed(model, relation.target);
    const t = typeOf(target);
    if (relation.kind === 'belongsTo') {
      const hiddenKey = readRestricted(fieldNamed(resource, relation.foreignKey));
      return {
        [relation.name]: {
          type: t.object,
          description: `The ${target.singular} this ${resource.singular} belongs to (through ${relation.foreignKey}).`,
          resolve: async (parent, _args, ctx) => {
            // A foreign key hidden on this row hides what it points to.
            if (hiddenKey && !(relation.foreignKey in parent)) throw hiddenFieldError(resource, relation.foreignKey);
            const key = belongsToKeyOf(resource, relation, target, parent);
            return key === undefined ? null : ((await ctx.loaders.byId(target).load(key)) ?? null);
          },
        },
      };
    }
    const args = listArgs(target, relationPageSize);
    const paging = `${relationPageSize} rows unless first or last says otherwise; page on with after.`;
    const extensions = { [DEFAULT_PAGE_SIZE]: relationPageSize };
    return {
      [`${relation.name}Aggregate`]: relationAggregateField(relation, (parent) => parentKeyOf(resource, relation, parent), target, t.aggregate, rowArgs(target), (given: RowArgs) => rowFiltersOf(target, given), limits),
      [relation.name]: {
        // Nullable: a relation the caller may not read is null with an error, and the parent stays.
        type: new GraphQLList(new GraphQLNonNull(t.object)),
        description: `The ${target.name} of this ${resource.singular} (through ${relation.foreignKey}): ${paging}`,
        args,
        extensions,
        resolve: async (parent, listArgsGiven: ListArgs, ctx) => {
          const query = listQueryOf(target, listArgsGiven, relationPageSize);
          return (await ctx.loaders.relatedPage(relation, query).load(parentKeyOf(resource, relation, parent))).records;
        },
      },
      [`${relation.name}Connection`]: {
        type: t.connection,
        description: `The ${target.name} of this ${resource.singular} as a cursor connection: ${paging}`,
        args,
        extensions,
        resolve: async (parent, listArgsGiven: ListArgs, ctx) => {
          const query = listQueryOf(target, listArgsGiven, relationPageSize);
          const page = await ctx.loaders.relatedPage(relation, query).load(parentKeyOf(resource, relation, parent));
          return connectionOf(ctx, target, query, page.records, page.more, () =>
            ctx.loaders.relatedCount(relation, query.filters).load(parentKeyOf(resource, relation, parent)),
          );
        },
      },
    };
  };

  const objectFields = (resource: ResourceModel): GraphQLFieldConfigMap<StoredRecord, GraphqlContext> => {
    const fields: GraphQLFieldConfigMap<StoredRecord, GraphqlContext> = {};
    for (const field of shownFields(resource)) {
      const scalar = scalarOf(resource, field);
      // A field the principal may not read on a row is null there (with an error).
      const required = (field.system || field.required) && !readRestricted(field);
      fields[field.name] = {
        type: required ? new GraphQLNonNull(scalar) : scalar,
        ...(readRestricted(field) ? { resolve: restrictedFieldResolver(resource, field) } : {}),
        ...describe(field),
        ...(deprecationOf(resource, field) === undefined ? {} : { deprecationReason: deprecationOf(resource, field) }),
      };
    }
    for (const relation of latest(resource).relations.values()) Object.assign(fields, relationFields(resource, relation));
    return fields;
  };

  const query: GraphQLFieldConfigMap<unknown, GraphqlContext> = {};
  const mutation: GraphQLFieldConfigMap<unknown, GraphqlContext> = {};
  for (const resource of served) {
    const t = typeOf(resource);
    const singular = camel(resource.singular);
    // A mapped table's resource is named after its table, often singular: its lists take its plural.
    const plural = camel(resource.mapping?.plural ?? resource.name);
    if (resource.singleton) {
      Object.assign(query, singletonQuery(resource, t.object));
      Object.assign(mutation, singletonMutations(resource, t));
      continue;
    }
    const key = keyArgs(resource, (field) => scalarOf(resource, field));
    query[singular] = {
      type: t.object,
      description: `One ${resource.singular} by ${Object.keys(key).join(' and ')} (null, with a not-found error, when there is none).`,
      args: key,
      resolve: (_root, args, ctx) => ctx.operations.get(ctx.operation, resource, keyOfArgs(resource, args)),
    } satisfies GraphQLFieldConfig<unknown, GraphqlContext, Record<string, unknown>>;
    // Root and mutation fields are nullable: one that fails (access, validation) is null with its
    // error, and the other fields of the request keep their data.
    const topLevel = { [DEFAULT_PAGE_SIZE]: limits.defaultLimit };
    query[plural] = {
      type: new GraphQLList(new GraphQLNonNull(t.object)),
      description: `A page of ${resource.name}.`,
      args: listArgs(resource, limits.defaultLimit, true),
      extensions: topLevel,
      resolve: async (_root, args: ListArgs, ctx) => (await ctx.operations.list(ctx.operation, resource, listQueryOf(resource, args, limits.defaultLimit))).records,
    };
    query[`${plural}Connection`] = {
      type: t.connection,
      description: `A page of ${resource.name} as a cursor connection, with the total count on request.`,
      args: listArgs(resource, limits.defaultLimit, true),
      extensions: topLevel,
      resolve: async (_root, args: ListArgs, ctx) => {
        const listQuery = listQueryOf(resource, args, limits.defaultLimit);
        const page = await ctx.operations.list(ctx.operation, resource, listQuery);
        return connectionOf(ctx, resource, listQuery, page.records, page.more, () => ctx.operations.count(ctx.operation, resource, listQuery.filters));
      },
    };
    query[`${plural}Aggregate`] = rootAggregateField<RowArgs>(resource, t.aggregate, rowArgs(resource), (given) => rowFiltersOf(resource, given), limits);
    // A view, or a table served read-only, has no mutations (the core refuses its writes too).
    if (resource.mapping?.readOnly !== true) Object.assign(mutation, resourceMutations(resource, t, key));
  }

  if (model.accounts !== undefined) {
    const resource = resourceNamed(model, model.accounts.resource);
    const t = typeOf(resource);
    Object.assign(mutation, accountMutations(model.accounts, resource, t.object, t.createInput));
  }

  const subscription = subscriptionFields(model, (resource) => typeOf(resource).object, (resource) => whereTypes.of(resource), (resource, where) =>
    conditionOfWhere(resource, where, { ...whereReading, noRelations: 'relation paths cannot be followed in a subscription (an event carries only its own record); use the fields of the record' }),
  );

  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    // No Mutation type when nothing can be written (every resource read-only): GraphQL allows none without fields.
    ...(Object.keys(mutation).length === 0 ? {} : { mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }) }),
    subscription: new GraphQLObjectType({ name: 'Subscription', fields: subscription }),
  });
}

/** The value a hasMany relation's rows hold of their parent: its id, or the mapped column its foreign key references. */
function parentKeyOf(resource: ResourceModel, relation: RelationModel, parent: unknown): RecordId {
  return (parent as Record<string, RecordId>)[relationJoin(resource, relation)?.referencedKey ?? 'id'] as RecordId;
}
