import type { SqlDatabase, SqlExecutor } from './sql-database.js';

/** Rows deleted per statement, so no single statement holds the write lock for long. */
const PRUNE_BATCH = 10_000;

/**
 * For append-only tables whose time column grows with the id (rows are stamped in their own
 * transaction): the id of the first row whose `column` is at or after `before`, found by binary
 * search on the primary key (a few point reads) instead of an index every insert would pay for.
 * Resolves to undefined when the table is empty.
 */
export async function firstIdAtOrAfter(db: SqlDatabase, table: string, column: string, before: string): Promise<{ first: number; boundary: number } | undefined> {
  const bounds = await db.one(db.builder.selectFrom(table).select((eb) => [eb.fn.min('id').as('first'), eb.fn.max('id').as('last')]).compile());
  if (bounds?.first === null || bounds?.first === undefined) return undefined;
  const first = Number(bounds.first);
  let low = first;
  let high = Number(bounds.last) + 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const row = await db.one(db.builder.selectFrom(table).select(['id', column]).where('id', '>=', middle).orderBy('id').limit(1).compile());
    if (row === undefined || String(row[column]) >= before) high = middle;
    else low = Number(row.id) + 1;
  }
  return { first, boundary: low };
}

/**
 * Deletes the rows of such a table whose `column` is before `before` (ISO 8601), only those with
 * a `status` in `statuses` when given, in batches; resolves to how many. `beforeDelete(tx, fromId,
 * toId)` runs first in each batch's transaction (to delete dependent rows).
 */
export async function pruneOlderThan(
  db: SqlDatabase,
  table: string,
  column: string,
  before: string,
  options: { statuses?: readonly string[]; beforeDelete?: (tx: SqlExecutor, fromId: number, toId: number) => Promise<void> } = {},
): Promise<number> {
  const found = await firstIdAtOrAfter(db, table, column, before);
  if (found === undefined) return 0;
  let deleted = 0;
  for (let from = found.first; from < found.boundary; from += PRUNE_BATCH) {
    const to = Math.min(found.boundary, from + PRUNE_BATCH);
    deleted += await db.transaction(async (tx) => {
      await options.beforeDelete?.(tx, from, to);
      let query = db.builder.deleteFrom(table).where('id', '>=', from).where('id', '<', to);
      if (options.statuses !== undefined) query = query.where('status', 'in', [...options.statuses]);
      return tx.run(query.compile());
    });
  }
  return deleted;
}
