import { DestructiveMigrationError } from '../errors.js';
import { loadSchemaFile } from '../schema/load-schema.js';
import { refuseMappedSchema } from '../schema/database-mapping.js';
import { applyMigration, planMigration } from '../store/migrate.js';
import { openDatabase } from '../store/open-database.js';
import { destructiveRefusal } from './destructive-advice.js';
import { chooseSchema, databaseToCreate } from './schema-and-database.js';

export interface MigrateFlags {
  schemaFile?: string | undefined;
  databaseUrl?: string;
  dryRun?: boolean;
  allowDestructive?: boolean;
}

/** `restgraph migrate`: prints the plan; applies it unless --dry-run. Resolves to the exit code. */
export async function runMigrate(flags: MigrateFlags): Promise<number> {
  const chosen = chooseSchema(flags.schemaFile, process.env);
  const schemaPath = chosen.path;
  const schema = loadSchemaFile(schemaPath);
  // A mapped database's tables are the user's: refused before the database is opened.
  refuseMappedSchema(schema, 'restgraph migrate');
  const database = databaseToCreate(flags.databaseUrl, process.env, chosen);
  const { db, rules, description } = await openDatabase(database.url);
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  if (database.notice !== undefined) process.stderr.write(`restgraph: ${database.notice}\n`);
  try {
    return await db.exclusively(async () => planAndApply());
  } finally {
    await db.close();
  }

  async function planAndApply(): Promise<number> {
    const plan = await planMigration(db, rules, schema);
    out(`Database: ${description}`);
    out(`Schema:   ${schemaPath}`);
    if (plan.changes.length === 0) {
      out('The database already matches the schema.');
    } else {
      out(`${plan.changes.length} change${plan.changes.length === 1 ? '' : 's'}:`);
      for (const change of plan.changes) {
        out(`  ${change.destructive ? '! ' : '+ '}${change.description}${change.destructive ? '  (destructive)' : ''}${change.breaking === undefined ? '' : `  (${change.breaking})`}`);
      }
    }
    for (const warning of plan.warnings) out(`warning: ${warning}`);
    if (flags.dryRun === true) {
      out('Dry run: nothing applied.');
      for (const change of plan.changes) for (const statement of change.statements) out(`  ${statement.replace(/\s+/g, ' ')};`);
      return 0;
    }
    try {
      await applyMigration(db, schema, plan, { allowDestructive: flags.allowDestructive === true });
    } catch (error) {
      throw error instanceof DestructiveMigrationError ? destructiveRefusal(chosen, database, error) : error;
    }
    out(plan.changes.length === 0 ? 'Nothing to apply.' : 'Applied.');
    return 0;
  }
}
