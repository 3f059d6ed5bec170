import { parseFilterValue } from '../core/list-query.js';
import type { FieldModel } from '../schema/schema-model.js';
import type { FilterCondition, TextMatch } from '../store/list-spec.js';

/**
 * The conditions json-server's filters mean, on one field (json-server-query.ts for the query
 * string, json-server-where.ts for 1.x's `_where`).
 */

/** Matches no row. */
export const NONE: FilterCondition = Object.freeze({ field: 'id', op: 'none', value: null });

/** The conditions of one field's parameter; a value that is not of the field's type matches no row, as in json-server. */
export function conditionsOf(field: FieldModel, op: string, texts: string[]): FilterCondition[] {
  const name = field.name;
  const typed = (): unknown[] => texts.flatMap((text) => {
    const parsed = parseFilterValue(field, text);
    return parsed.problem === undefined ? [parsed.value] : [];
  });
  switch (op) {
    case 'eq':
    case 'in': {
      const found = typed();
      if (found.length === 0) return [NONE];
      return [found.length === 1 ? { field: name, op: 'eq', value: found[0] } : { field: name, op: 'in', value: found }];
    }
    case 'ne':
      // 0.17: every value must differ, and an empty (null) field matches none of them.
      return [{ field: name, op: 'isNull', value: false }, ...typed().map((value): FilterCondition => ({ field: name, op: 'ne', value }))];
    case 'like':
    case 'contains':
    case 'startsWith':
    case 'endsWith': {
      if (field.type !== 'string' && field.type !== 'enum') return [NONE];
      const matches = texts.map((text): FilterCondition => ({ field: name, op: 'textMatch', value: textMatchOf(op, text) }));
      return [anyOf(matches)];
    }
    default: {
      // lt, lte, gt, gte: repeated values are alternatives (0.17 ORs them).
      const branches = typed().map((value): FilterCondition => ({ field: name, op: op as 'lt', value }));
      return [anyOf(branches)];
    }
  }
}

/** Matches a row one of `branches` matches. */
export function anyOf(branches: FilterCondition[]): FilterCondition {
  if (branches.length === 0) return NONE;
  return branches.length === 1 ? (branches[0] as FilterCondition) : { field: 'id', op: 'any', value: branches };
}

/**
 * 0.17's `_like` is a case-insensitive regular expression. A pattern from the query string could take
 * exponential time (ReDoS), so restgraph reads only its anchors: `^text` starts with, `text$` ends with,
 * `^text$` is the whole value, anything else is a case-insensitive substring.
 */
function textMatchOf(op: string, text: string): TextMatch {
  if (op === 'startsWith') return { text, at: 'start' };
  if (op === 'endsWith') return { text, at: 'end' };
  if (op === 'contains') return { text, at: 'anywhere' };
  const start = text.startsWith('^');
  const end = text.endsWith('$') && text.length > (start ? 1 : 0);
  const body = text.slice(start ? 1 : 0, end ? -1 : undefined);
  return { text: body, at: start ? 'start' : end ? 'end' : 'anywhere' };
}
