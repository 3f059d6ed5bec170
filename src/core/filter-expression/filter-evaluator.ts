import { resourceNamed, type RelationModel, type ResourceModel, type SchemaModel } from '../../schema/schema-model.js';
import { foldCase } from '../../store/fold-case.js';
import type { FilterCondition, StoredRecord, TextMatch } from '../../store/list-spec.js';

/**
 * The meaning of a checked {@link FilterCondition} on one record, in memory, exactly as the SQL the
 * store compiles it to (store/sql-conditions.ts): for events and subscriptions, and the property
 * test that holds the two to the same answers. Records are as clients see them (decoded values:
 * datetimes as ISO 8601 UTC text, dates as YYYY-MM-DD, which compare as text in time order).
 * Text compares by code point, as the database columns do (SQLite's BINARY, PostgreSQL's "C").
 */

/** How to follow relation paths from a record: the related rows the reader may see. */
export interface RelatedRecords {
  schema: SchemaModel;
  /** The rows `relation` of `resource` leads to from `record`: zero or one for belongsTo. */
  rowsOf(resource: ResourceModel, relation: RelationModel, record: StoredRecord): readonly StoredRecord[];
}

/**
 * Whether `record` (of `resource`) matches `condition`. Conditions on the record's own fields need
 * nothing more; relation paths (`related`, `some`, `noneOf`) need `related`, and throw without it.
 * @example matchesFilter(parseFilterExpression("title ~ 'élan'", posts, undefined), { id: 1, title: 'ÉLAN' }) // true
 */
export function matchesFilter(condition: FilterCondition, record: StoredRecord, resource?: ResourceModel, related?: RelatedRecords): boolean {
  const value = record[condition.field];
  const given = condition.value;
  switch (condition.op) {
    case 'none':
      return false;
    case 'any':
      return (given as readonly FilterCondition[]).some((c) => matchesFilter(c, record, resource, related));
    case 'all':
      return (given as readonly FilterCondition[]).every((c) => matchesFilter(c, record, resource, related));
    case 'not':
      return !matchesFilter(given as FilterCondition, record, resource, related);
    case 'related':
    case 'some':
    case 'noneOf': {
      const relation = resource?.relations.get(condition.field);
      if (relation === undefined || related === undefined || resource === undefined) throw new Error(`relation ${condition.field} cannot be followed here`);
      const target = resourceNamed(related.schema, relation.target);
      const found = related.rowsOf(resource, relation, record).some((row) => matchesFilter(given as FilterCondition, row, target, related));
      return condition.op === 'noneOf' ? !found : found;
    }
    case 'isNull':
      return isEmpty(value) === given;
    case 'eq':
      return given === null ? isEmpty(value) : !isEmpty(value) && compareValues(value, given) === 0;
    case 'ne':
      return given === null ? !isEmpty(value) : isEmpty(value) || compareValues(value, given) !== 0;
    default:
  }
  if (isEmpty(value)) return false;
  switch (condition.op) {
    case 'lt':
      return compareValues(value, given) < 0;
    case 'lte':
      return compareValues(value, given) <= 0;
    case 'gt':
      return compareValues(value, given) > 0;
    case 'gte':
      return compareValues(value, given) >= 0;
    case 'in':
      return (given as readonly unknown[]).some((v) => compareValues(value, v) === 0);
    case 'contains':
      return String(value).includes(given as string);
    case 'startsWith':
      return String(value).startsWith(given as string);
    case 'containsIgnoringCase':
      return foldCase(String(value)).includes(foldCase(given as string));
    case 'textMatch':
      return matchesText(String(value), given as TextMatch);
    case 'search':
      // Only the database's full-text index knows its tokenizer and ranking: never evaluated here.
      throw new Error('a full-text search cannot be evaluated in memory');
  }
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined;
}

/** The order of two values of one field's type: numbers by value, booleans false first, text by code point. */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return compareCodePoints(String(a), String(b));
}

/** Text order by Unicode code point (UTF-16 order differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done === true) return q.done === true ? 0 : -1;
    if (q.done === true) return 1;
    const d = (p.value.codePointAt(0) ?? 0) - (q.value.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
}

/** json-server's case-insensitive test, as SQLite's LIKE makes it: A–Z folded only. */
function matchesText(value: string, match: TextMatch): boolean {
  const fold = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const [text, of] = [fold(match.text), fold(value)];
  return match.at === 'start' ? of.startsWith(text) : match.at === 'end' ? of.endsWith(text) : of.includes(text);
}
