import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { DbJsonSource } from '../core/db-json-import.js';
import { FORBIDDEN_MEMBER_DETAIL, jsonInputProblem, MAX_JSON_DEPTH } from '../core/json-input-rules.js';
import { DbJsonError } from '../errors.js';

/**
 * Reading a json-server database file (`db.json`). json-server reads the file whole, and so does
 * restgraph, up to {@link MAX_DB_JSON_BYTES}; a 100,000-post file (about 10 MB) reads in well under
 * a second.
 */

/** The largest db.json read: parsing holds the text and its values in memory at once. */
export const MAX_DB_JSON_BYTES = 256 * 1024 * 1024; // 256 MiB

/** Top-level keys of a restgraph schema document: a .json file with only these is a schema, not data. */
const SCHEMA_KEYS = new Set(['resources', 'versions', 'rateLimits', '$schema']);

/**
 * Reads `file` when it is a json-server database: a `.json` file whose top level is collections.
 * Returns undefined for a file that is not `.json` or is a restgraph schema (`{"resources": {…}}`).
 *
 * @throws DbJsonError when the file cannot be read, is too large, is not JSON (with the line and
 *   column), or holds values nested too deeply or forbidden member names (naming the item)
 */
export function readDbJson(file: string): DbJsonSource | undefined {
  if (!file.toLowerCase().endsWith('.json')) return undefined;
  let bytes: Buffer;
  try {
    const size = statSync(file).size;
    if (size > MAX_DB_JSON_BYTES) throw new DbJsonError(`${file} is ${Math.round(size / 1024 / 1024)} MiB; restgraph reads a db.json of at most ${MAX_DB_JSON_BYTES / 1024 / 1024} MiB. Import larger data with restgraph import (docs/cli.md).`);
    bytes = readFileSync(file);
  } catch (error) {
    if (error instanceof DbJsonError) throw error;
    throw new DbJsonError(`Cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new DbJsonError(`${file} is not JSON: ${syntaxError(text, error)}.`);
  }
  if (isSchemaDocument(data)) return undefined;
  checkValues(file, data);
  return { file, data: data as Record<string, unknown>, sha256: createHash('sha256').update(bytes).digest('hex') };
}

function isSchemaDocument(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const resources = (data as Record<string, unknown>).resources;
  return typeof resources === 'object' && resources !== null && !Array.isArray(resources) && Object.keys(data).every((key) => SCHEMA_KEYS.has(key));
}

/** JSON.parse's reason, with the line and column of its position. */
function syntaxError(text: string, error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\(line \d+ column \d+\)$/, '');
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position === undefined) return message;
  const before = text.slice(0, Number(position));
  const line = before.split('\n').length;
  const column = Number(position) - before.lastIndexOf('\n');
  return `${message.replace(/ in JSON at position \d+/, '')} at line ${line}, column ${column}`;
}

/** Each item follows the rules of every JSON value a client sends (nesting depth, member names). */
function checkValues(file: string, data: unknown): void {
  if (typeof data !== 'object' || data === null) return;
  for (const [key, value] of Object.entries(data)) {
    const items: unknown[] = Array.isArray(value) ? value : [value];
    for (const [index, item] of items.entries()) {
      const problem = jsonInputProblem(item);
      if (problem === undefined) continue;
      const where = Array.isArray(value) ? `"${key}"[${index}]` : `"${key}"`;
      throw new DbJsonError(
        problem === 'too-deep'
          ? `${file}: ${where} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, more than restgraph accepts in a value.`
          : `${file}: ${where} contains ${FORBIDDEN_MEMBER_DETAIL}.`,
      );
    }
  }
}
