import type { FieldModel } from '../schema/schema-model.js';
import { DECIMAL_PATTERN, TIME_PATTERN } from '../schema/field-json-schema.js';
import type { QueryOperator } from '../store/list-spec.js';
import { hasNul, NUL_DETAIL } from './storable-text.js';
import { decimalInput, int64Input, int64Problem } from '../schema/mapped-values.js';

const DECIMAL_TEXT = new RegExp(DECIMAL_PATTERN);
const TIME_TEXT = new RegExp(TIME_PATTERN);

/**
 * What a filter may ask of a field of each type, and how a filter's text becomes a value of the
 * field's type: shared by query-string filters (list-query.ts) and filter expressions
 * (filter-expression/).
 */

/** The operators each field type takes. */
export const OPERATORS_BY_TYPE: Record<FieldModel['type'], readonly QueryOperator[]> = {
  string: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'startsWith', 'isNull'],
  integer: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  number: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  decimal: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  time: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  datetime: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  date: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'isNull'],
  enum: ['eq', 'ne', 'in', 'isNull'],
  boolean: ['eq', 'ne', 'isNull'],
  json: ['isNull'],
  file: ['isNull'],
};

/** Turns a query-string value into a value of the field's type. */
export function parseFilterValue(field: FieldModel, text: string): { value?: unknown; problem?: string } {
  if (hasNul(text)) return { problem: NUL_DETAIL };
  switch (field.type) {
    case 'string':
      return { value: text };
    case 'integer': {
      if (field.format === 'int64') {
        const problem = int64Problem(text);
        return problem === undefined ? { value: int64Input(text) } : { problem: /^-?\d+$/.test(text) ? 'is out of range of a 64-bit integer' : 'is not an integer' };
      }
      if (!/^-?\d{1,16}$/.test(text)) return { problem: 'is not an integer' };
      const n = Number(text);
      return Number.isSafeInteger(n) ? { value: n } : { problem: 'is out of range' };
    }
    case 'number': {
      const n = text.trim() === '' ? NaN : Number(text);
      return Number.isFinite(n) ? { value: n } : { problem: 'is not a number' };
    }
    case 'boolean':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : { problem: 'must be true or false' };
    case 'datetime': {
      const match = /^(\d{4}-\d{2}-\d{2})([T ](\d{2}):(\d{2})(:(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(text);
      if (match === null) return { problem: 'is not an ISO 8601 date-time' };
      const [, day = '', time, hours, minutes, , seconds] = match;
      const clockOk = time === undefined || (Number(hours) < 24 && Number(minutes) < 60 && (seconds === undefined || Number(seconds) < 60));
      const ms = Date.parse(time === undefined ? `${day}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`);
      return isCalendarDate(day) && clockOk && !Number.isNaN(ms) ? { value: new Date(ms).toISOString() } : { problem: 'is not a valid date-time' };
    }
    case 'date':
      return isCalendarDate(text) ? { value: text } : { problem: 'is not a date (YYYY-MM-DD)' };
    case 'decimal':
      return DECIMAL_TEXT.test(text) ? { value: decimalInput(text) } : { problem: 'is not a decimal number (digits, a point, digits)' };
    case 'time':
      return TIME_TEXT.test(text) ? { value: text } : { problem: 'is not a time of day (HH:MM[:SS])' };
    case 'enum':
      return field.values?.includes(text) === true ? { value: text } : { problem: `is not one of ${field.values?.join(', ') ?? ''}` };
    case 'json':
      return { problem: 'json fields can only be filtered with [isNull]' };
    case 'file':
      return { problem: 'file fields can only be filtered with [isNull]' };
  }
}

/** `YYYY-MM-DD` naming a day that exists (no February 30th). */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
