import type { SqlExecutor } from '../sql-database.js';
import type { ConstraintDescription, ConstraintViolation } from '../store-errors.js';

/**
 * What PostgreSQL's catalog says of a violated constraint its error names (postgres-errors.ts):
 * its columns (in key order), a CHECK's expression, a foreign key's referenced table. Schema only:
 * no row is read, and the error's DETAIL (which holds row values) is not used.
 */

/** The columns of an index (a unique or exclusion constraint has one of its name), in key order; expression parts left out. */
const INDEX_COLUMNS = `
  select a.attname as "column"
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  join pg_index i on i.indexrelid = c.oid
  cross join lateral unnest(i.indkey) with ordinality as k(attnum, position)
  join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
  where n.nspname = $1 and c.relname = $2
  order by k.position`;

/** A constraint of a table: its definition, referenced table, and columns in key order. */
const CONSTRAINT = `
  select pg_get_constraintdef(c.oid) as definition,
         case when c.confrelid = 0 then null else (select r.relname from pg_class r where r.oid = c.confrelid) end as referenced,
         array(select a.attname from unnest(c.conkey) with ordinality as k(attnum, position)
               join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.position)::text[] as columns
  from pg_constraint c
  join pg_class t on t.oid = c.conrelid
  join pg_namespace n on n.oid = t.relnamespace
  where n.nspname = $1 and t.relname = $2 and c.conname = $3`;

/** `violation` with `facts.described` (and its columns), as the catalog says; as it is when the error names no constraint. */
export async function describePostgresViolation(db: SqlExecutor, violation: ConstraintViolation): Promise<ConstraintViolation> {
  const { constraint: name, schema, table } = violation.facts;
  if (violation.kind === 'notNull') return violation.with({ described: [{ ...(table === undefined ? {} : { table }), columns: violation.columns }] });
  if (name === undefined || schema === undefined || table === undefined) return violation;
  if (violation.kind === 'unique' || violation.kind === 'exclusion') {
    // The key's columns from the error, where it gave them; the index's otherwise (expressions, exclusion).
    const columns = violation.columns.length > 0 ? violation.columns : (await db.all({ sql: INDEX_COLUMNS, parameters: [schema, name] })).map((r) => String(r.column));
    return violation.with({ described: [{ name, table, columns }] }, columns);
  }
  const row = (await db.all({ sql: CONSTRAINT, parameters: [schema, table, name] }))[0];
  if (row === undefined) return violation;
  const columns = Array.isArray(row.columns) ? row.columns.map(String) : [];
  const described: ConstraintDescription = { name, table, columns };
  // "CHECK ((price > 0))" → "(price > 0)"
  if (violation.kind === 'check' && typeof row.definition === 'string') described.expression = row.definition.replace(/\s+NOT VALID$/i, '').replace(/^CHECK\s*\((.*)\)$/is, '$1');
  if (typeof row.referenced === 'string') described.referencedTable = row.referenced;
  // A foreign key refused on a delete: its columns are those of the referencing table (the error's), not the row's.
  return violation.with({ described: [described] }, violation.facts.side === 'referenced' ? violation.columns : columns);
}
