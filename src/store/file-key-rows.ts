import { sql } from 'kysely';
import type { ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from './list-spec.js';
import type { SqlDatabase } from './sql-database.js';

/** Rows whose text matches a key read to tell a reference from a name that merely holds it. */
const CANDIDATES = 50;

/**
 * Committed rows of `resource` whose file fields may reference the storage key `key` (at most
 * 50: their id and file fields, parsed). One statement over the file columns as their JSON text (a text column on SQLite,
 * json on PostgreSQL, cast to text: the value as it was written): `LIKE '%<key>%'` finds the rows
 * holding the key anywhere, the caller reads each candidate's values to keep real references
 * only (a file name may hold the text of a key). A full scan of the table: for imports into a
 * database that has rows, not for requests.
 */
export async function rowsHoldingFileKey(db: SqlDatabase, resource: ResourceModel, key: string): Promise<StoredRecord[]> {
  const fields = resource.writableFields.filter((f) => f.type === 'file');
  if (fields.length === 0) return [];
  // A key is [A-Za-z0-9_-]: `_` is the one LIKE wildcard among them.
  const pattern = `%${key.replace(/_/g, '\\_')}%`;
  const matches = fields.map((f) => sql<boolean>`cast(${sql.ref(f.name)} as text) like ${pattern} escape '\\'`);
  const statement = db.builder
    .selectFrom(resource.name)
    .select(['id', ...fields.map((f) => sql<string>`cast(${sql.ref(f.name)} as text)`.as(f.name))])
    .where(sql<boolean>`(${sql.join(matches, sql` or `)})`)
    .limit(CANDIDATES)
    .compile();
  return (await db.all(statement)).map((row) => {
    const record: StoredRecord = { id: Number(row.id) };
    for (const f of fields) {
      const text = row[f.name];
      record[f.name] = typeof text === 'string' ? (JSON.parse(text) as unknown) : null;
    }
    return record;
  });
}
