import { databaseTarget } from '../open-database.js';
import { postgresTarget } from '../postgres/postgres-driver.js';
import type { CaptureTriggerOptions, CaptureTriggers } from './capture-names.js';

export * from './capture-names.js';

/**
 * The triggers of `restgraph capture` (docs/existing-database.md#events-for-writes-made-by-other-programs):
 * on each mapped table, one trigger per operation records every row another program inserts,
 * updates or deletes into restgraph's own table of captured changes, which the relay
 * (core/capture-relay.ts) turns into events. Only restgraph's own objects are created: the
 * triggers (named `restgraph_capture_<table>_<operation>`), on PostgreSQL the function they call
 * and the captured-changes table in the system schema, on SQLite the `_restgraph_` table.
 */

/**
 * Opens the capture triggers of the database a URL names, on a connection of its own (SQLite: the
 * file as it is, its journal mode unchanged; never created).
 *
 * @throws ConfigError naming DATABASE_URL when the URL is not understood or the database cannot be opened.
 */
export async function openCaptureTriggers(url: string, options: CaptureTriggerOptions): Promise<CaptureTriggers> {
  const target = databaseTarget(url);
  if (postgresTarget(url) !== undefined) {
    const { openPostgresCaptureTriggers } = await import('../postgres/postgres-capture-triggers.js');
    return openPostgresCaptureTriggers(url, target.description, options);
  }
  const { openSqliteCaptureTriggers } = await import('../sqlite/sqlite-capture-triggers.js');
  return openSqliteCaptureTriggers(target.file ?? '', target.description);
}

