import type pino from 'pino';
import type { MigrationChange } from '../store/migrate.js';

/**
 * Logs each schema change a start applied to the database, one line each: at info level, or at
 * warn level when it deleted data (allowed with allowDestructiveMigrations) or changes what clients
 * see (a field renamed in place).
 */
export function logSchemaChanges(logger: pino.Logger, changes: readonly MigrationChange[], database: string): void {
  for (const change of changes) {
    const details = { change: change.description, database, ...(change.destructive ? { destructive: true } : {}) };
    if (change.breaking !== undefined) logger.warn({ ...details, breaking: true }, `schema change applied: ${change.description}; ${change.breaking}`);
    else if (change.destructive) logger.warn(details, `schema change applied: ${change.description} (destructive)`);
    else logger.info(details, `schema change applied: ${change.description}`);
  }
}
