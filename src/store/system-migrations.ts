import { MigrationFailedError } from '../errors.js';
import type { SqlDatabase } from './sql-database.js';
import { SYSTEM_MIGRATIONS, type SystemMigration } from './system-tables.js';

/**
 * Which internal migrations a database has run. Apart from `_restgraph_migrations`, which records
 * the user's schema; like every internal table, its name cannot be a resource's.
 */
export const VERSIONS_TABLE = '_restgraph_system_migrations';

/**
 * Brings restgraph's own tables to this release's layout: runs each migration of
 * {@link SYSTEM_MIGRATIONS} the database has not run, in order, each in one transaction with the
 * record of its version. A database made before the migrations were numbered holds version 1's
 * tables already; version 1 then only records itself.
 *
 * Instances starting together do not race: on PostgreSQL the work holds the advisory lock of
 * {@link SqlDatabase.exclusively}; on SQLite each migration's write transaction looks again,
 * under the file's write lock, whether another process has run it meanwhile.
 *
 * @throws MigrationFailedError when a newer release has upgraded the database (this one would
 *   misread its tables), or when a statement fails (that migration is rolled back as a whole).
 */
export async function upgradeSystemTables(db: SqlDatabase): Promise<void> {
  await db.exclusively(async () => {
    await db.exec(`create table if not exists "${VERSIONS_TABLE}" ("version" integer primary key, "name" text not null, "appliedAt" text not null)`);
    const rows = await db.all(db.builder.selectFrom(VERSIONS_TABLE).select('version').compile());
    const applied = new Set(rows.map((row) => Number(row.version)));
    const newest = Math.max(0, ...applied);
    const latest = SYSTEM_MIGRATIONS.at(-1)?.version ?? 0;
    if (newest > latest) {
      throw new MigrationFailedError(
        `The database's internal tables are at version ${newest}, newer than this release of restgraph knows (up to ${latest}): ` +
          'a newer release has upgraded it. Run that release (or a later one), or restore a backup taken before the upgrade.',
      );
    }
    let changed = false;
    for (const migration of SYSTEM_MIGRATIONS) {
      if (!applied.has(migration.version) && (await applyOnce(db, migration))) changed = true;
    }
    // Drops statements the connections prepared against the old layout.
    if (changed) await db.exec('select 1');
  });
}

/** Runs one migration and records it, unless another process has meanwhile; resolves to whether it ran. */
async function applyOnce(db: SqlDatabase, migration: SystemMigration): Promise<boolean> {
  return db.transaction(async (tx) => {
    const done = await tx.all(db.builder.selectFrom(VERSIONS_TABLE).select('version').where('version', '=', migration.version).compile());
    if (done.length > 0) return false;
    for (const statement of migration.statements(db.rules)) {
      try {
        await tx.run({ sql: statement, parameters: [] });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new MigrationFailedError(`Internal migration ${migration.version} (${migration.name}) failed: ${reason}`, { cause: error });
      }
    }
    await tx.run(
      db.builder.insertInto(VERSIONS_TABLE).values({ version: migration.version, name: migration.name, appliedAt: new Date().toISOString() }).compile(),
    );
    return true;
  });
}
