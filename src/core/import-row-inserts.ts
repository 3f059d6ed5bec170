import type { ResourceModel } from '../schema/schema-model.js';
import type { BulkRows } from '../store/bulk-rows.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import { ConstraintViolation } from '../store/store-errors.js';
import { refusalReason } from './write-errors.js';

/**
 * Inserts an import's batch of rows in one statement, in a savepoint; when a constraint of the
 * database refuses one (one the schema does not declare: a CHECK, a unique index over several
 * columns, a trigger …), each row in a savepoint of its own, handing those refused to `reject`
 * with the reason, the others written. Resolves to the rows written.
 */
export async function insertedRows<R extends { record: StoredRecord }>(
  db: SqlDatabase,
  tx: SqlExecutor,
  bulk: BulkRows,
  resource: ResourceModel,
  rows: readonly R[],
  reject: (row: R, reason: string) => void,
): Promise<R[]> {
  if ((await refusal(tx, bulk, resource, rows)) === undefined) return [...rows];
  const kept: R[] = [];
  for (const row of rows) {
    const refused = await refusal(tx, bulk, resource, [row]);
    if (refused === undefined) kept.push(row);
    else reject(row, await refusalReason(db, resource, refused));
  }
  return kept;
}

const SAVEPOINT = '"rg_import_rows"';

/** Inserts the rows in a savepoint: undefined once in, or the violation that refused them (then nothing of them is written). */
async function refusal(tx: SqlExecutor, bulk: BulkRows, resource: ResourceModel, rows: readonly { record: StoredRecord }[]): Promise<ConstraintViolation | undefined> {
  await tx.run({ sql: `savepoint ${SAVEPOINT}`, parameters: [] });
  try {
    await bulk.insert(tx, resource, rows.map((r) => r.record), true);
  } catch (error) {
    if (!(error instanceof ConstraintViolation)) throw error;
    await tx.run({ sql: `rollback to savepoint ${SAVEPOINT}`, parameters: [] });
    await tx.run({ sql: `release savepoint ${SAVEPOINT}`, parameters: [] });
    return error;
  }
  await tx.run({ sql: `release savepoint ${SAVEPOINT}`, parameters: [] });
  return undefined;
}
