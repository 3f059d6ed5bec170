import { fieldNamed, type FieldModel, type ResourceModel } from '../schema/schema-model.js';

/**
 * Records from text cells (a CSV file's rows), converted by the field types: integer, number and
 * boolean cells become numbers and booleans, json cells are parsed, the others (string, date,
 * datetime, enum) stay text. An empty cell is no value: the field takes its default, or null.
 * A cell that does not convert is left as text, so the record validator names the problem in the
 * same words as for an API request ("must be an integer").
 */

/** Which columns of a header are fields of `resource` (id, createdAt and updatedAt included), or why not. */
export function columnFields(resource: ResourceModel, header: readonly string[]): FieldModel[] | string {
  const unknown = header.filter((name) => !resource.fields.has(name));
  if (unknown.length > 0) return `the column${unknown.length === 1 ? '' : 's'} ${unknown.map((n) => JSON.stringify(n)).join(', ')} ${unknown.length === 1 ? 'is not a field' : 'are not fields'} of ${resource.name}`;
  const twice = header.filter((name, i) => header.indexOf(name) !== i);
  if (twice.length > 0) return `the column ${JSON.stringify(twice[0])} appears twice`;
  return header.map((name) => fieldNamed(resource, name));
}

/** A record from one row's cells, in the columns' order; or why not (a cell count, or a json cell that is not JSON). */
export function recordFromCells(columns: readonly FieldModel[], cells: readonly string[]): Record<string, unknown> | string {
  if (cells.length !== columns.length) return `has ${cells.length} cell${cells.length === 1 ? '' : 's'}; the header has ${columns.length}`;
  const record: Record<string, unknown> = {};
  const problems: string[] = [];
  columns.forEach((field, i) => {
    const text = cells[i] ?? '';
    if (text === '') return;
    const value = valueFromText(field, text);
    if (value === NOT_JSON) problems.push(`/${field.name}: is not JSON`);
    else record[field.name] = value;
  });
  return problems.length > 0 ? problems.join('; ') : record;
}

const NOT_JSON = Symbol('not JSON');

/** One cell's value by its field's type (see the module's comment). */
export function valueFromText(field: FieldModel, text: string): unknown {
  switch (field.type) {
    case 'integer':
      return /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : text;
    case 'number': {
      const number = Number(text);
      return text.trim() !== '' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text) && Number.isFinite(number) ? number : text;
    }
    case 'boolean': {
      const word = text.trim().toLowerCase();
      if (word === 'true' || word === '1' || word === 'yes') return true;
      if (word === 'false' || word === '0' || word === 'no') return false;
      return text;
    }
    case 'json':
    case 'file':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return NOT_JSON;
      }
    default:
      return text;
  }
}
