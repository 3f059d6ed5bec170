import {
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLEnumType as EnumType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLResolveInfo,
  type GraphQLScalarType,
  type SelectionSetNode,
} from 'graphql';
import { aggregates, groupable, groupTerm, MAX_GROUP_KEYS, type AggregateGroup, type AggregateQuery } from '../core/aggregate-query.js';
import { invalidQuery, type ListLimits } from '../core/list-query.js';
import type { FieldModel, RelationModel, ResourceModel } from '../schema/schema-model.js';
import { AGGREGATE_FUNCTIONS, DATE_UNITS, type AggregateFunction, type AggregateSortKey, type GroupKey, type Measure } from '../store/aggregate-spec.js';
import type { FilterCondition, StoredRecord } from '../store/list-spec.js';
import type { RecordId } from '../schema/record-key.js';
import type { GraphqlContext } from './graphql-context.js';
import { AGGREGATE_GROUPS } from './operation-cost.js';
import { constantCase } from './schema-parts.js';

/** What an aggregate field answers with, by resource: its object type and what its arguments mean. */
export interface AggregateTypes {
  object: GraphQLObjectType;
  /** Undefined when nothing of the resource can group rows. */
  groupBy: GraphQLEnumType | undefined;
  sort: GraphQLEnumType;
  /** groupBy enum value (also the group object's field) → group key. */
  groupKeys: ReadonlyMap<string, GroupKey>;
  sortKeys: ReadonlyMap<string, { target: 'count' | { group: string } | Measure; direction: 'asc' | 'desc' }>;
}

/** The group field (and groupBy value) of a key: `status`, or `createdAt_month` for a truncated date. */
function groupName(key: GroupKey): string {
  return key.unit === undefined ? key.field : `${key.field}_${key.unit}`;
}

const FUNCTION_DESCRIPTIONS: Record<AggregateFunction, string> = {
  sum: 'Sums of the non-null values (null when the group has none).',
  avg: 'Averages of the non-null values (null when the group has none).',
  min: 'Smallest non-null values.',
  max: 'Largest non-null values.',
  countDistinct: 'How many different non-null values.',
};

/**
 * The types of `<resources>Aggregate`: `<Type>Aggregate { group count sum avg min max countDistinct }`,
 * `<Type>AggregateGroupBy` (the groupable fields, dates also as `<field>_day|_month|_year`) and
 * `<Type>AggregateSort`, from the fields GraphQL shows and the rules of src/core/aggregate-query.ts.
 */
export function aggregateTypesOf(
  resource: ResourceModel,
  fields: readonly FieldModel[],
  scalarOf: (field: FieldModel) => GraphQLScalarType | EnumType,
  dateScalar: GraphQLScalarType,
): AggregateTypes {
  const typeName = resource.typeName;
  const groupKeys = new Map<string, GroupKey>();
  for (const field of fields) {
    if (groupable(field)) groupKeys.set(groupName({ field: field.name }), { field: field.name });
    if (groupable(field, 'day')) for (const unit of DATE_UNITS) groupKeys.set(groupName({ field: field.name, unit }), { field: field.name, unit });
  }
  const groupFields: GraphQLFieldConfigMap<AggregateGroup['group'], GraphqlContext> = {};
  for (const [name, key] of groupKeys) {
    const term = groupTerm(key);
    groupFields[name] = {
      type: key.unit === undefined ? scalarOf(fields.find((f) => f.name === key.field) as FieldModel) : dateScalar,
      description: key.unit === undefined ? `The group's ${key.field} (null for the rows without one).` : `The ${key.unit} of ${key.field} (UTC) as a date: its first day.`,
      resolve: (group) => group[term] ?? null,
    };
  }
  const objectFields: GraphQLFieldConfigMap<AggregateGroup, GraphqlContext> = {
    count: { type: new GraphQLNonNull(GraphQLInt), description: 'How many rows the group has.' },
  };
  if (groupKeys.size > 0) {
    const group = new GraphQLObjectType({ name: `${typeName}AggregateGroup`, description: 'The values the group was made by (only those of groupBy are set).', fields: groupFields });
    objectFields.group = { type: new GraphQLNonNull(group), description: 'The values of the groupBy keys of this group.' };
  }
  const sortKeys = new Map<string, AggregateTypes['sortKeys'] extends ReadonlyMap<string, infer V> ? V : never>();
  const addSort = (name: string, target: 'count' | { group: string } | Measure): void => {
    for (const direction of ['asc', 'desc'] as const) sortKeys.set(`${name}_${direction.toUpperCase()}`, { target, direction });
  };
  addSort('COUNT', 'count');
  for (const name of groupKeys.keys()) addSort(constantCase(name), { group: name });
  for (const fn of AGGREGATE_FUNCTIONS) {
    const measured = fields.filter((f) => aggregates(fn, f));
    if (measured.length === 0) continue;
    const type = new GraphQLObjectType({
      name: `${typeName}Aggregate${fn.charAt(0).toUpperCase()}${fn.slice(1)}`,
      description: FUNCTION_DESCRIPTIONS[fn],
      fields: Object.fromEntries(
        measured.map((f) => [f.name, { type: fn === 'countDistinct' ? new GraphQLNonNull(GraphQLInt) : fn === 'sum' || fn === 'avg' ? GraphQLFloat : scalarOf(f) }]),
      ),
    });
    objectFields[fn] = { type, description: FUNCTION_DESCRIPTIONS[fn] };
    for (const f of measured) addSort(`${constantCase(fn)}_${constantCase(f.name)}`, { fn, field: f.name });
  }
  const object = new GraphQLObjectType({ name: `${typeName}Aggregate`, description: `Aggregates of a group of ${resource.name}.`, fields: objectFields });
  const groupBy =
    groupKeys.size === 0
      ? undefined
      : new GraphQLEnumType({ name: `${typeName}AggregateGroupBy`, values: Object.fromEntries([...groupKeys.keys()].map((name) => [name, { value: name }])) });
  const sort = new GraphQLEnumType({ name: `${typeName}AggregateSort`, values: Object.fromEntries([...sortKeys.keys()].map((name) => [name, { value: name }])) });
  return { object, groupBy, sort, groupKeys, sortKeys };
}

interface AggregateArgs {
  groupBy?: readonly string[] | null;
  sort?: readonly string[] | null;
  limit?: number | null;
}

/**
 * `<resources>Aggregate(<row arguments>, groupBy:, sort:, limit:)`: a list of groups, costed as
 * `limit` (else the most groups) objects. `rowArgs` and `filtersOf` are the list fields' own
 * (today `filter:`), so every way of choosing rows a list has, an aggregate has.
 */
export function rootAggregateField<Args>(
  resource: ResourceModel,
  types: AggregateTypes,
  rowArgs: GraphQLFieldConfigArgumentMap,
  filtersOf: (args: Args) => FilterCondition[],
  limits: ListLimits,
): GraphQLFieldConfig<unknown, GraphqlContext, Args & AggregateArgs> {
  return {
    type: new GraphQLList(new GraphQLNonNull(types.object)),
    description: `Aggregates of ${resource.name} per group, in order of the group values unless sort says otherwise. More than ${limits.maxGroups} groups is an error unless limit is given.`,
    args: {
      ...rowArgs,
      ...(types.groupBy === undefined ? {} : { groupBy: { type: new GraphQLList(new GraphQLNonNull(types.groupBy)), description: 'Group the rows by these; dates also by day, month or year (UTC).' } }),
      sort: { type: new GraphQLList(new GraphQLNonNull(types.sort)), description: 'Order of the groups; ties by the group values, ascending.' },
      limit: { type: GraphQLInt, description: `At most this many groups (1 to ${limits.maxGroups}).` },
    },
    extensions: { [AGGREGATE_GROUPS]: limits.maxGroups },
    resolve: (_root, args, ctx, info) => ctx.operations.aggregate(ctx.operation, resource, aggregateQueryOf(types, args, filtersOf(args), info, limits)),
  };
}

/**
 * `<relation>Aggregate(<row arguments>)` of a hasMany relation: one group per parent, loaded for
 * every parent of a level in one statement. `parentKey` is the value the related rows hold of their
 * parent (its id, or the mapped column their foreign key references).
 */
export function relationAggregateField<Args>(
  relation: RelationModel,
  parentKey: (parent: StoredRecord) => RecordId,
  target: ResourceModel,
  types: AggregateTypes,
  rowArgs: GraphQLFieldConfigArgumentMap,
  filtersOf: (args: Args) => FilterCondition[],
  limits: ListLimits,
): GraphQLFieldConfig<StoredRecord, GraphqlContext, Args> {
  return {
    type: types.object,
    description: `Aggregates of this row's ${relation.name} (through ${relation.foreignKey}) as one group.`,
    args: rowArgs,
    extensions: { [AGGREGATE_GROUPS]: 1 },
    resolve: async (parent, args, ctx, info) => {
      const query = aggregateQueryOf(types, {}, filtersOf(args), info, limits);
      const groups = await ctx.loaders.relatedAggregate(relation, query).load(parentKey(parent));
      return groups[0] ?? null;
    },
  };
}

/** The checked aggregate query of a field's arguments; the functions are those the selection asks for. */
function aggregateQueryOf(types: AggregateTypes, args: AggregateArgs, filters: FilterCondition[], info: GraphQLResolveInfo, limits: ListLimits): AggregateQuery {
  const groupBy = (args.groupBy ?? []).map((name) => types.groupKeys.get(name) as GroupKey);
  const problems = [];
  const fields = new Set(groupBy.map((k) => k.field));
  if (groupBy.length > MAX_GROUP_KEYS) problems.push({ parameter: 'groupBy', detail: `has ${groupBy.length} entries; at most ${MAX_GROUP_KEYS} are allowed` });
  else if (fields.size < groupBy.length) problems.push({ parameter: 'groupBy', detail: 'names a field twice' });
  const sort: AggregateSortKey[] = [];
  for (const name of args.sort ?? []) {
    const key = types.sortKeys.get(name);
    if (key === undefined) continue;
    if (key.target === 'count') sort.push({ target: { kind: 'count' }, direction: key.direction });
    else if ('group' in key.target) {
      const wanted = key.target.group;
      const index = (args.groupBy ?? []).indexOf(wanted);
      if (index < 0) problems.push({ parameter: 'sort', detail: `${name} sorts by ${wanted}, which is not in groupBy` });
      else sort.push({ target: { kind: 'group', index }, direction: key.direction });
    } else sort.push({ target: { kind: 'measure', measure: key.target }, direction: key.direction });
  }
  const limit = args.limit ?? undefined;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > limits.maxGroups)) problems.push({ parameter: 'limit', detail: `must be an integer from 1 to ${limits.maxGroups}` });
  if (problems.length > 0) throw invalidQuery(problems);
  return { filters, groupBy, count: true, measures: selectedMeasures(info), sort, limit: limit ?? limits.maxGroups, strict: limit === undefined };
}

/** The functions the selection asks for (`sum { total }` → sum of total), fragments included. */
function selectedMeasures(info: GraphQLResolveInfo): Measure[] {
  const measures = new Map<string, Measure>();
  const visit = (set: SelectionSetNode | undefined, seen: Set<FragmentDefinitionNode>, each: (name: string, inner: SelectionSetNode | undefined) => void): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) each(selection.name.value, selection.selectionSet);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen, each);
      else {
        const fragment = info.fragments[selection.name.value];
        if (fragment === undefined || seen.has(fragment)) continue;
        seen.add(fragment);
        visit(fragment.selectionSet, seen, each);
      }
    }
  };
  for (const node of info.fieldNodes) {
    visit(node.selectionSet, new Set(), (name, inner) => {
      const fn = name as AggregateFunction;
      if (!AGGREGATE_FUNCTIONS.includes(fn)) return;
      visit(inner, new Set(), (field) => {
        if (field !== '__typename') measures.set(`${fn}.${field}`, { fn, field });
      });
    });
  }
  return [...measures.values()];
}
