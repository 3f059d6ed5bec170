import { sql } from 'kysely';
import type { SqlDatabase } from './sql-database.js';

/** What {@link auditIdentifierCase} found. */
export interface IdentifierCaseAudit {
  /** Rows whose value has an upper-case letter A–Z (stored before identifiers were folded). */
  readonly notFolded: number;
  /** Values that two or more rows share once lower-cased: accounts to merge by hand. */
  readonly clashes: number;
}

/**
 * Counts the values of a table's column that are not in lower case, and the lower-cased values
 * several rows share: one scan each, run once at start-up when an email identifier is folded (see
 * schema/identifier-case.ts). Both databases' `lower()` fold A–Z only here (SQLite's own; the
 * PostgreSQL columns' "C" collation): rows with other upper-case letters are not counted.
 */
export async function auditIdentifierCase(db: SqlDatabase, table: string, column: string): Promise<IdentifierCaseAudit> {
  const value = sql.ref(column);
  const notFoldedRow = await db.one(db.builder.selectFrom(table).select((eb) => eb.fn.countAll().as('count')).where(sql<boolean>`${value} <> lower(${value})`).compile());
  const notFolded = Number(notFoldedRow?.count ?? 0);
  if (notFolded === 0) return { notFolded, clashes: 0 };
  const clashing = db.builder
    .selectFrom(table)
    .select(sql`lower(${value})`.as('folded'))
    .where(value, 'is not', null)
    .groupBy(sql`lower(${value})`)
    .having((eb) => eb.fn.countAll(), '>', 1);
  const clashesRow = await db.one(db.builder.selectFrom(clashing.as('c')).select((eb) => eb.fn.countAll().as('count')).compile());
  return { notFolded, clashes: Number(clashesRow?.count ?? 0) };
}
