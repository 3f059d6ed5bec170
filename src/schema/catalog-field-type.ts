import type { ColumnCatalog } from './database-catalog.js';
import type { FieldDefinition } from './schema-model.js';

/**
 * The field type of a database column (docs/existing-database.md#types), from the type as the
 * database writes it (PostgreSQL's format_type, SQLite's declared type). A type restgraph does not
 * know is served as its text, with a note saying so: never a failure.
 */
export interface MappedType {
  field: FieldDefinition;
  /** Said in the file beside the field (a type served as text, bytes as base64). */
  note?: string;
}

export function mappedType(column: ColumnCatalog, dialect: 'postgres' | 'sqlite'): MappedType {
  if (column.enumValues !== undefined && column.enumValues.length > 0) return { field: { type: 'enum', values: [...new Set(column.enumValues)] } };
  if (column.arrayOf !== undefined || column.dataType.endsWith('[]')) return { field: { type: 'json', format: 'array' }, note: 'an array: read and written as a JSON array' };
  const type = column.dataType.toLowerCase().trim();
  const base = type.replace(/\s*\(.*$/, '').replace(/\s+with(out)? time zone$/, '').trim();
  const size = /\((\d+)(?:\s*,\s*(\d+))?\)/.exec(type);
  const [length, scale] = [size?.[1] === undefined ? undefined : Number(size[1]), size?.[2] === undefined ? undefined : Number(size[2])];
  switch (base) {
    case 'smallint':
    case 'int2':
    case 'integer':
    case 'int':
    case 'int4':
    case 'mediumint':
    case 'tinyint':
    case 'serial':
    case 'smallserial':
      return { field: { type: 'integer' } };
    case 'bigint':
    case 'int8':
    case 'bigserial':
      return { field: { type: 'integer', format: 'int64' }, note: 'a bigint: sent as a JSON string beyond 2^53' };
    case 'numeric':
    case 'decimal':
      return { field: { type: 'decimal', ...(length === undefined ? {} : { precision: length }), ...(scale === undefined ? {} : { scale }) }, note: 'sent as a string, every digit kept' };
    case 'real':
    case 'float4':
    case 'double precision':
    case 'double':
    case 'float8':
    case 'float':
      return { field: { type: 'number' } };
    case 'text':
    case 'citext':
    case 'clob':
    case 'name':
      return { field: { type: 'string' } };
    case 'character varying':
    case 'varchar':
    case 'character':
    case 'char':
    case 'nchar':
    case 'nvarchar':
    case 'bpchar':
      return { field: { type: 'string', ...(length === undefined ? {} : { maxLength: length }) } };
    case 'boolean':
    case 'bool':
      return { field: { type: 'boolean' } };
    case 'date':
      return { field: { type: 'date' } };
    case 'timestamp':
    case 'timestamptz':
    case 'datetime':
      return { field: { type: 'datetime' } };
    case 'time':
    case 'timetz':
      return { field: { type: 'time' } };
    case 'uuid':
      return { field: { type: 'string', format: 'uuid' } };
    case 'json':
    case 'jsonb':
      return { field: { type: 'json' } };
    case 'bytea':
    case 'blob':
      return { field: { type: 'string', format: 'base64' }, note: 'bytes: read and written as base64' };
    default:
      return (dialect === 'sqlite' ? sqliteAffinity(base) : undefined) ?? { field: { type: 'string' }, note: `type ${column.dataType} is not one restgraph knows: served as its text` };
  }
}

/** SQLite's rules for a declared type it does not name exactly (sqlite.org/datatype3.html#affinity_name_examples). */
function sqliteAffinity(type: string): MappedType | undefined {
  if (type.includes('int')) return { field: { type: 'integer' } };
  if (/char|clob|text/.test(type)) return { field: { type: 'string' } };
  if (/real|floa|doub/.test(type)) return { field: { type: 'number' } };
  return undefined;
}
