import { isDateText, isDateTime } from './field-json-schema.js';
import type { FieldType } from './schema-model.js';

/**
 * The type of a field inferred from every value it holds in the data (`restgraph serve db.json`),
 * and the reason, in words, for the schema's comments.
 *
 * - only `true`/`false` → boolean; only integers → integer; integers and fractions → number;
 * - only RFC 3339 date-times with a zone and a real date → datetime; only `YYYY-MM-DD` → date;
 *   other strings → string;
 * - objects, arrays, and values of different kinds → json; no value at all → json (anything fits).
 *
 * Integers beyond 2^53 − 1 make the field a number: JSON.parse has already rounded them, and an
 * integer field holds only integers a JavaScript number keeps exactly (docs/schema.md).
 */

export interface InferredType {
  type: FieldType;
  why: string;
}

/** Tallies the values of one field, one at a time, so that no list of values is kept. */
export class FieldTypeTally {
  #values = 0;
  #booleans = 0;
  #integers = 0;
  #unsafeIntegers = 0;
  #fractions = 0;
  #dateTimes = 0;
  #dates = 0;
  #strings = 0;
  #structured = 0;

  add(value: unknown): void {
    if (value === null || value === undefined) return;
    this.#values++;
    if (typeof value === 'boolean') this.#booleans++;
    else if (typeof value === 'number') {
      if (!Number.isInteger(value)) this.#fractions++;
      else if (Number.isSafeInteger(value)) this.#integers++;
      else this.#unsafeIntegers++;
    } else if (typeof value === 'string') {
      if (isDateTime(value)) this.#dateTimes++;
      else if (isDateText(value)) this.#dates++;
      else this.#strings++;
    } else this.#structured++;
  }

  /** The type every value fits, and why. */
  result(): InferredType {
    const n = this.#values;
    const all = (count: number): boolean => count === n;
    if (n === 0) return { type: 'json', why: 'json: no value to infer a type from (any JSON value fits)' };
    if (all(this.#booleans)) return { type: 'boolean', why: 'boolean: every value is true or false' };
    if (all(this.#integers)) return { type: 'integer', why: 'integer: every value is an integer' };
    const numbers = this.#integers + this.#unsafeIntegers + this.#fractions;
    if (all(numbers)) {
      return this.#unsafeIntegers > 0
        ? { type: 'number', why: 'number: some integers are beyond 2^53 - 1, which only a number field holds (rounded as JSON.parse read them)' }
        : { type: 'number', why: 'number: every value is a number, some with fractions' };
    }
    if (all(this.#dateTimes)) return { type: 'datetime', why: 'datetime: every value is an ISO 8601 date-time with a time zone' };
    if (all(this.#dates)) return { type: 'date', why: 'date: every value is a date (YYYY-MM-DD)' };
    if (all(this.#strings + this.#dateTimes + this.#dates)) return { type: 'string', why: 'string: every value is a string' };
    if (all(this.#structured)) return { type: 'json', why: 'json: values are objects or arrays' };
    return { type: 'json', why: 'json: values are of different kinds' };
  }
}
