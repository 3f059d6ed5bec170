import { filterLimitsOf, OPERATORS_BY_TYPE, type ListLimits } from '../core/list-query.js';
import { DEFAULT_FILTER_LIMITS } from '../core/filter-expression/filter-parser.js';
import { MAX_SEARCH_LENGTH, MAX_SEARCH_WORDS } from '../core/text-search.js';
import { LATER_QUERY_PARAMETERS, type FieldModel } from '../schema/schema-model.js';
import type { QueryOperator } from '../store/list-spec.js';
import { ref, type ParameterObject, type ReferenceObject, type SchemaObject } from './openapi-types.js';
import { responseValueSchema } from './resource-schemas.js';
import type { FieldView, ResourceView } from './versioned-view.js';

const OPERATOR_MEANINGS: Record<QueryOperator, string> = {
  eq: 'equals',
  ne: 'differs from (rows where it is null match too)',
  lt: 'is less than',
  lte: 'is at most',
  gt: 'is greater than',
  gte: 'is at least',
  in: 'is one of (comma-separated)',
  contains: 'contains (case-sensitive)',
  startsWith: 'starts with (case-sensitive)',
  isNull: 'is null (`true`) or is not (`false`)',
};

/**
 * The query parameters of a resource's lists, as components: `sort`, `fields`, `include`, and one
 * filter per field and operator its type takes (`name`, `name[startsWith]`, …), the same table
 * {@link parseListQuery} checks them with.
 */
export function resourceParameters(resource: ResourceView, limits: ListLimits): Record<string, ParameterObject> {
  const params: Record<string, ParameterObject> = {};
  const sortable = resource.fields.filter((f) => f.model.type !== 'json' && f.model.type !== 'file').map((f) => f.name);
  params[`${resource.name}.sort`] = {
    name: 'sort',
    in: 'query',
    description: 'Sort keys, `-` for descending (`sort=name,-createdAt`). `id` is always the final tiebreak; nulls sort first ascending.',
    style: 'form',
    explode: false,
    schema: { type: 'array', items: { type: 'string', enum: sortable.flatMap((n) => [n, `-${n}`]) }, uniqueItems: true },
  };
  params[`${resource.name}.fields`] = {
    name: 'fields',
    in: 'query',
    description: 'Return only these fields, in this order (`fields=id,name`): the objects then hold only them (and any relations included).',
    style: 'form',
    explode: false,
    schema: { type: 'array', items: { type: 'string', enum: resource.fields.map((f) => f.name) }, uniqueItems: true },
  };
  if (resource.relations.length > 0) {
    params[`${resource.name}.include`] = {
      name: 'include',
      in: 'query',
      description: 'Embed relations, one level deep: hasMany as an array, belongsTo as an object or null. Needs read access to the embedded resource.',
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { type: 'string', enum: resource.relations.map((r) => r.name) }, uniqueItems: true },
    };
  }
  params[`${resource.name}.filterExpression`] = {
    name: 'filter',
    in: 'query',
    description: filterDescription(resource, limits),
    schema: { type: 'string', minLength: 1, maxLength: limits.maxFilterLength ?? DEFAULT_FILTER_LIMITS.maxLength, examples: [filterExample(resource)] },
  };
  const searchable = resource.fields.filter((f) => f.model.searchable === true).map((f) => f.name);
  if (searchable.length > 0 && !resource.fields.some((f) => f.model.name === 'search')) {
    params[`${resource.name}.search`] = {
      name: 'search',
      in: 'query',
      description:
        `Full-text search in ${searchable.join(', ')}: rows holding every word (\`search=sqlite index\`), the last word as a prefix, ` +
        '`"quoted phrases"` as phrases; anything else in the text only separates words. Most relevant first unless `sort` is given ' +
        `(such pages follow each other by \`offset\`, not \`after\`). At most ${MAX_SEARCH_LENGTH} characters and ${MAX_SEARCH_WORDS} words.`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH },
    };
  }
  for (const field of resource.fields) {
    const operators = OPERATORS_BY_TYPE[field.model.type];
    // A field named like a later list parameter (filter) is filtered with [eq]: the bare name is the parameter's.
    if (operators.includes('eq') && !LATER_QUERY_PARAMETERS.includes(field.name)) params[`${resource.name}.filter.${field.name}`] = filterParameter(field, 'eq', field.name, limits);
    for (const op of operators) params[`${resource.name}.filter.${field.name}.${op}`] = filterParameter(field, op, `${field.name}[${op}]`, limits);
  }
  return params;
}

/** The grammar of filter expressions, in short (docs/list-queries.md#filter-expressions has it all). */
function filterDescription(resource: ResourceView, limits: ListLimits): string {
  const bounds = filterLimitsOf(limits);
  return [
    `A filter expression over the fields of ${resource.name}, ANDed with the field parameters (see docs/list-queries.md#filter-expressions):`,
    '',
    '```text',
    'expression := and ("or" and)*          and := unary ("and" unary)*',
    'unary      := "not" unary | "(" expression ")" | test',
    'test       := field comparison | belongsTo "." test | hasMany "." ("any" | "none") "(" expression ")"',
    'comparison := ("=" | "!=" | "<" | "<=" | ">" | ">=" | "~" | "!~" | "^=") value',
    '            | "in" "(" value ("," value)* ")" | "is" ["not"] "null"',
    "value      := number | 'text' | \"text\" | true | false | null",
    '```',
    '',
    '`~` contains and `!~` does not contain, ignoring case (all of Unicode); `^=` starts with. A comparison with an empty field is false (`!=` is true); `not` matches exactly the other rows. Dates and datetimes are quoted ISO 8601 strings.',
    `At most ${bounds.maxConditions} comparisons, ${bounds.maxDepth} levels of nesting, ${bounds.maxHops} relations deep, ${bounds.maxLength} characters; a problem is a 400 whose error names the character offset.`,
  ].join('\n');
}

/** An example expression on the resource's first text or numeric field. */
function filterExample(resource: ResourceView): string {
  const field = resource.fields.find((f) => !f.model.system && (f.model.type === 'string' || f.model.type === 'integer' || f.model.type === 'number'));
  if (field === undefined) return 'id > 10';
  return field.model.type === 'string' ? `${field.name} ~ 'a' or id > 10` : `${field.name} >= 10 and not id = 1`;
}

/** `$ref`s to every query parameter of a list of `resource` (its own lists and hasMany relation routes to it). */
export function listParameterRefs(resource: ResourceView, all: Record<string, ParameterObject>): ReferenceObject[] {
  const own = Object.keys(all).filter((name) => name.startsWith(`${resource.name}.`));
  const isFilter = (name: string): boolean => name.startsWith(`${resource.name}.filter.`);
  return [
    ...own.filter((n) => !isFilter(n)).map((n) => ref('parameters', n)),
    ...['limit', 'after', 'offset', 'count'].map((n) => ref('parameters', n)),
    ...own.filter(isFilter).map((n) => ref('parameters', n)),
  ];
}

/** `$ref`s to the query parameters of a single-object read of `resource`: `fields` and `include`. */
export function itemParameterRefs(resource: ResourceView): ReferenceObject[] {
  return [ref('parameters', `${resource.name}.fields`), ...(resource.relations.length > 0 ? [ref('parameters', `${resource.name}.include`)] : [])];
}

function filterParameter(field: FieldView, op: QueryOperator, name: string, limits: ListLimits): ParameterObject {
  const value = filterValueSchema(field.model);
  const schema: SchemaObject =
    op === 'isNull'
      ? { type: 'boolean' }
      : op === 'in'
        ? { type: 'array', items: value, minItems: 1, maxItems: limits.maxInValues }
        : op === 'contains' || op === 'startsWith'
          ? { type: 'string' }
          : value;
  return {
    name,
    in: 'query',
    description: `Only rows whose ${field.name} ${OPERATOR_MEANINGS[op]}${op === 'in' ? ` (at most ${limits.maxInValues} values)` : ''}.`,
    ...(op === 'in' ? { style: 'form', explode: false } : {}),
    ...(field.deprecated ? { deprecated: true } : {}),
    schema,
  };
}

/** A filter value as the query string carries it, typed as the list parser reads it (a datetime may be a bare date). */
function filterValueSchema(field: FieldModel): SchemaObject {
  if (field.type === 'datetime') return { type: 'string', description: 'ISO 8601: `2026-11-01` or `2026-11-01T10:00:00Z` (UTC when no zone is given).' };
  return responseValueSchema(field);
}
