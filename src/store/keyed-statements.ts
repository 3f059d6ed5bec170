import { LRUCache } from 'lru-cache';
import { statementBytes } from './statement-bytes.js';
import type { SqlStatement } from './sql-database.js';

/** A statement kept for its shape: `keyAt[i]` is where the i-th key goes in its parameters. */
interface KeyedStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly keyAt: readonly number[];
}

/** Stand-ins for keys while a statement is compiled for keeping: objects, so no value a client sends is taken for one. */
const KEY_MARKERS: object[] = [];

function keyMarkers(count: number): readonly object[] {
  while (KEY_MARKERS.length < count) KEY_MARKERS.push(Object.freeze({ keyMarker: KEY_MARKERS.length }));
  return KEY_MARKERS.slice(0, count);
}

/**
 * Statements that differ from one request to the next only by a list of keys (a relation read's
 * parents), kept by shape: compiled once with markers in the keys' places, then given each
 * request's keys. A shape is everything but the keys, values included (list-cache-key.ts).
 */
export class KeyedStatementCache {
  readonly #kept: LRUCache<string, KeyedStatement>;

  /** Keeps statements (least recently used go first) while they take at most `maxBytes`, roughly. */
  constructor(maxBytes: number) {
    this.#kept = new LRUCache({ maxSize: maxBytes, sizeCalculation: (kept, shape) => statementBytes(kept, shape) + 8 * kept.keyAt.length });
  }

  /** What the statements kept take, in bytes, as counted against the bound. */
  get bytes(): number {
    return this.#kept.calculatedSize;
  }

  /**
   * The statement for these keys: the kept one of `shape` with the keys in place, or `compile`'s
   * (kept for the next time). Without a shape, or when the markers cannot be found in what
   * `compile` made, it is compiled with the keys themselves.
   */
  statement(shape: string | undefined, keys: readonly unknown[], compile: (keys: readonly unknown[]) => SqlStatement): SqlStatement {
    if (shape === undefined) return compile(keys);
    let kept = this.#kept.get(shape);
    if (kept === undefined) {
      kept = locateKeys(compile(keyMarkers(keys.length)), keys.length);
      if (kept === undefined) return compile(keys);
      this.#kept.set(shape, kept);
    }
    const parameters = kept.parameters.slice();
    for (let i = 0; i < keys.length; i++) parameters[kept.keyAt[i] as number] = keys[i];
    return { sql: kept.sql, parameters };
  }
}

/** The statement with the places of its `count` key markers noted; undefined unless each is found exactly once. */
function locateKeys(statement: SqlStatement, count: number): KeyedStatement | undefined {
  const keyAt = new Array<number>(count).fill(-1);
  for (const [at, parameter] of statement.parameters.entries()) {
    const marker = typeof parameter === 'object' && parameter !== null ? KEY_MARKERS.indexOf(parameter) : -1;
    if (marker === -1) continue;
    if (marker >= count || keyAt[marker] !== -1) return undefined;
    keyAt[marker] = at;
  }
  return keyAt.includes(-1) ? undefined : { sql: statement.sql, parameters: statement.parameters, keyAt };
}
