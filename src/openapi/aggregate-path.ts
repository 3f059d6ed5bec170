import { aggregates, groupable, MAX_GROUP_KEYS } from '../core/aggregate-query.js';
import type { ListLimits } from '../core/list-query.js';
import { AGGREGATE_FUNCTIONS, DATE_UNITS, type AggregateFunction } from '../store/aggregate-spec.js';
import { operation, success } from './operation-builder.js';
import { fieldReadFailures } from './operation-security.js';
import { mergeFailures } from './problem-responses.js';
import { ref, type ParameterObject, type PathItemObject, type SchemaObject } from './openapi-types.js';
import { responseValueSchema } from './resource-schemas.js';
import type { ResourceView } from './versioned-view.js';

const FUNCTION_MEANINGS: Record<AggregateFunction, string> = {
  sum: 'The sum of each field per group (nulls ignored; null when a group has no value)',
  avg: 'The average of each field per group (nulls ignored; null when a group has no value)',
  min: 'The smallest value of each field per group (nulls ignored)',
  max: 'The largest value of each field per group (nulls ignored)',
  countDistinct: 'How many different non-null values each field has per group',
};

/**
 * `GET /<resource>/aggregate`, as src/rest/resource-routes.ts serves it and
 * src/core/aggregate-query.ts checks it: which fields each function and groupBy take, the
 * filters of the resource's lists, and the shape of the groups (see docs/aggregates.md).
 */
export function aggregatePath(resource: ResourceView, prefix: string, limits: ListLimits, parameters: Record<string, ParameterObject>): Record<string, PathItemObject> {
  if (resource.model.singleton) return {};
  const list = (name: string, description: string, names: readonly string[]): ParameterObject => ({
    name,
    in: 'query',
    description,
    style: 'form',
    explode: false,
    schema: { type: 'array', items: { type: 'string', enum: [...names] }, uniqueItems: true },
  });
  const groupTerms = resource.fields.flatMap((f) => [
    ...(groupable(f.model) ? [f.name] : []),
    ...(groupable(f.model, 'day') ? DATE_UNITS.map((unit) => `${f.name}:${unit}`) : []),
  ]);
  const measured = (fn: AggregateFunction) => resource.fields.filter((f) => aggregates(fn, f.model));
  const own: ParameterObject[] = [
    list('groupBy', `Group the rows by these (at most ${MAX_GROUP_KEYS}); a date or datetime truncated to its UTC day, month or year with \`:day\`, \`:month\`, \`:year\`. Without it, one group of every row.`, groupTerms),
    { name: 'count', in: 'query', description: 'Show how many rows each group has (the default when no function is asked for).', schema: { type: 'boolean' } },
  ];
  const functions: Partial<Record<AggregateFunction, readonly string[]>> = {};
  for (const fn of AGGREGATE_FUNCTIONS) {
    const names = measured(fn).map((f) => f.name);
    if (names.length === 0) continue;
    functions[fn] = names;
    own.push(list(fn, `${FUNCTION_MEANINGS[fn]}.`, names));
  }
  const sortTerms = ['count', ...groupTerms, ...Object.entries(functions).flatMap(([fn, names]) => names.map((n) => `${fn}.${n}`))];
  own.push(
    list('sort', 'Order of the groups: `count`, `<function>.<field>` (`-sum.total`) or a groupBy term, `-` for descending; then by the group values, ascending (nulls first).', [...sortTerms, ...sortTerms.map((s) => `-${s}`)]),
    { name: 'limit', in: 'query', description: `Answer at most this many groups. Without it, more than ${limits.maxGroups} groups is a 400.`, schema: { type: 'integer', minimum: 1, maximum: limits.maxGroups } },
  );
  const filters = Object.keys(parameters).filter((n) => n.startsWith(`${resource.name}.filter.`)).map((n) => ref('parameters', n));
  const values = (fn: AggregateFunction, schemaOf: (f: ResourceView['fields'][number]) => SchemaObject): SchemaObject => ({
    type: 'object',
    properties: Object.fromEntries(measured(fn).map((f) => [f.name, schemaOf(f)])),
    additionalProperties: false,
  });
  const nullableNumber: SchemaObject = { type: ['number', 'null'] };
  const group: SchemaObject = {
    type: 'object',
    required: ['group'],
    properties: {
      group: {
        type: 'object',
        description: 'The group values by groupBy term (empty without groupBy); truncated dates as `YYYY-MM-DD`.',
        properties: Object.fromEntries(
          resource.fields.flatMap((f): [string, SchemaObject][] => [
            ...(groupable(f.model) ? [[f.name, nullable(responseValueSchema(f.model))] as [string, SchemaObject]] : []),
            ...(groupable(f.model, 'day') ? DATE_UNITS.map((unit): [string, SchemaObject] => [`${f.name}:${unit}`, { type: ['string', 'null'], format: 'date' }]) : []),
          ]),
        ),
        additionalProperties: false,
      },
      count: { type: 'integer', minimum: 0 },
      ...(functions.sum === undefined ? {} : { sum: values('sum', () => nullableNumber) }),
      ...(functions.avg === undefined ? {} : { avg: values('avg', () => nullableNumber) }),
      ...(functions.min === undefined ? {} : { min: values('min', (f) => nullable(responseValueSchema(f.model))) }),
      ...(functions.max === undefined ? {} : { max: values('max', (f) => nullable(responseValueSchema(f.model))) }),
      ...(functions.countDistinct === undefined ? {} : { countDistinct: values('countDistinct', () => ({ type: 'integer', minimum: 0 })) }),
    },
    additionalProperties: false,
  };
  const name = resource.name.charAt(0).toUpperCase() + resource.name.slice(1);
  return {
    [`${prefix}/${resource.name}/aggregate`]: {
      get: operation(
        {
          operationId: `aggregate${name}`,
          summary: `Aggregate ${resource.name}`,
          description:
            'Counts, sums, averages, extremes and distinct counts of the rows the filters match (the same filters as the list), per group. ' +
            'Rows the caller may not read are not counted. The answer is a JSON array with one object per group, in order of the group values unless `sort` says otherwise.',
          tags: [resource.name],
          parameters: [...own, ...filters],
        },
        [resource.model.access.read],
        { 200: success('The groups.', { type: 'array', items: group }) },
        mergeFailures({ 400: ['invalid-query'], 414: ['uri-too-long'] }, fieldReadFailures(resource)),
        { deprecated: resource.deprecated },
      ),
    },
  };
}

/** The schema, or null. */
function nullable(schema: SchemaObject): SchemaObject {
  return { anyOf: [schema, { type: 'null' }] };
}
