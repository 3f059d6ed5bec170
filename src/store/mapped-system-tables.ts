import type { SqlDatabase } from './sql-database.js';
import { upgradeSystemTables } from './system-migrations.js';

/**
 * restgraph's own tables beside a mapped database (docs/existing-database.md), made or brought up
 * to date without touching a table of the user's: on PostgreSQL in the system schema that leads
 * the connections' search_path (created here on first start), on SQLite as the `_restgraph_*`
 * tables of the same file. Events name records of mapped tables by their key in its text form,
 * so on PostgreSQL the outbox's `recordId` holds text (SQLite keeps any value in its column).
 */
export async function prepareMappedSystemTables(db: SqlDatabase, systemSchema: string | undefined): Promise<void> {
  if (systemSchema !== undefined) await db.run({ sql: `create schema if not exists "${systemSchema.replaceAll('"', '""')}"`, parameters: [] });
  await upgradeSystemTables(db);
  if (systemSchema === undefined) return;
  const column = await db.one({
    sql: `select data_type from information_schema.columns where table_schema = $1 and table_name = '_restgraph_events' and column_name = 'recordId'`,
    parameters: [systemSchema],
  });
  if (column !== undefined && column.data_type !== 'text') {
    await db.run({ sql: `alter table "${systemSchema.replaceAll('"', '""')}"."_restgraph_events" alter column "recordId" type text`, parameters: [] });
  }
}
