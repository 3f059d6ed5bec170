import type { ErrorDetail } from '../errors.js';
import { withinInLimit, type ListLimits } from '../core/list-query.js';
import type { FilterCondition } from '../store/list-spec.js';
import { anyOf, conditionsOf, NONE } from './json-server-conditions.js';
import { quoted, type VersionTranslator } from './version-translation.js';

/** The operators of 1.x's `_where` (its where-operators.ts). */
const WHERE_OPERATORS = new Set(['lt', 'lte', 'gt', 'gte', 'eq', 'ne', 'in', 'contains', 'startsWith', 'endsWith']);
/** Bounds of one `_where`: nesting of `or`, and conditions in all. */
const MAX_DEPTH = 8;
const MAX_CONDITIONS = 100;

/**
 * json-server 1.x's `_where` (`{"or":[{"views":{"gt":100}},{"title":{"contains":"json"}}]}`), as one
 * condition: the members of an object are all required, `or` takes any of its objects, a field's
 * object holds operators. Undefined when the text is not a JSON object: 1.x then falls back to the
 * other parameters. Deliberate differences (docs/json-server.md): a plain value (`{"views":100}`) is
 * equality (1.x matches nothing), and paths into objects are not supported. Field names are those
 * of `tr`'s version; an operand's values are held to the limit of an `in` filter ({@link withinInLimit}).
 */
export function parseWhere(tr: VersionTranslator, text: string, limits: ListLimits, problems: ErrorDetail[]): FilterCondition | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const budget = { conditions: 0 };
  const where = allOf({ tr, limits, budget, problems }, value, 0);
  if (budget.conditions > MAX_CONDITIONS) problems.push({ parameter: '_where', detail: `has ${budget.conditions} conditions; at most ${MAX_CONDITIONS} are allowed` });
  return where;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the walk of one `_where` shares. */
interface WhereWalk {
  tr: VersionTranslator;
  limits: ListLimits;
  budget: { conditions: number };
  problems: ErrorDetail[];
}

function allOf(walk: WhereWalk, where: Record<string, unknown>, depth: number): FilterCondition {
  const { tr, limits, budget, problems } = walk;
  if (depth > MAX_DEPTH) {
    problems.push({ parameter: '_where', detail: `nests "or" more than ${MAX_DEPTH} deep` });
    return NONE;
  }
  const parts: FilterCondition[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (key === 'or') {
      // 1.x: an "or" that is not a non-empty list matches nothing.
      const branches = Array.isArray(value) ? value.filter(isObject) : [];
      parts.push(branches.length === 0 ? NONE : anyOf(branches.map((branch) => allOf(walk, branch, depth + 1))));
      continue;
    }
    const refused = tr.notInVersion(key);
    if (refused !== undefined) {
      problems.push({ parameter: '_where', detail: quoted(refused) });
      continue;
    }
    const field = tr.field(key);
    const operators = isObject(value) ? Object.keys(value).filter((op) => WHERE_OPERATORS.has(op)) : [];
    if (isObject(value) && operators.length === 0) continue; // a path into an object: 1.x matches it only inside objects
    if (field === undefined) {
      parts.push(NONE); // 1.x: a field a row does not have fails every operator
      continue;
    }
    if (field.type === 'json' || field.type === 'file') {
      problems.push({ parameter: '_where', detail: `${field.name} is a ${field.type} field: ${field.type} fields cannot be filtered` });
      continue;
    }
    const tests: [string, unknown][] = isObject(value) ? operators.map((op) => [op, value[op]]) : [['eq', value]];
    for (const [op, operand] of tests) {
      budget.conditions++;
      const given = Array.isArray(operand) ? operand : [operand];
      if (!withinInLimit('_where', given.length, limits, problems)) continue;
      const texts = given.map((v) => (v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean)));
      parts.push(...conditionsOf(field, op, texts));
    }
  }
  return parts.length === 1 ? (parts[0] as FilterCondition) : { field: 'id', op: 'all', value: parts };
}
