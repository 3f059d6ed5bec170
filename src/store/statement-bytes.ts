import type { SqlStatement } from './sql-database.js';

/**
 * Roughly what a statement kept in a cache takes in memory, with its cache key: its text, its
 * parameters (strings at two bytes a character, anything else a few words) and the key. Bounds
 * caches of statements in bytes, as their keys and parameters hold values clients send.
 */
export function statementBytes(statement: Pick<SqlStatement, 'sql' | 'parameters'>, key: string): number {
  let bytes = 2 * (statement.sql.length + key.length) + 64;
  for (const parameter of statement.parameters) bytes += typeof parameter === 'string' ? 2 * parameter.length + 16 : 16;
  return bytes;
}
