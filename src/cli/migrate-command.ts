import { optionsFromEnv } from '../app/options-from-env.js';
import { DestructiveMigrationError } from '../errors.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../schema/load-schema.js';
import { applyMigration, planMigration } from '../store/migrate.js';
import { openDatabase } from '../store/open-database.js';

export interface MigrateFlags {
  schemaFile?: string | undefined;
  databaseUrl?: string;
  dryRun?: boolean;
  allowDestructive?: boolean;
}

/** `restgraph migrate`: prints the plan; applies it unless --dry-run. Resolves to the exit code. */
export async function runMigrate(flags: MigrateFlags): Promise<number> {
  const env = optionsFromEnv(process.env);
  const schemaPath = flags.schemaFile ?? (typeof env.schema === 'string' ? env.schema : EXAMPLE_SCHEMA_PATH);
  const schema = loadSchemaFile(schemaPath);
  const { db, rules, description } = await openDatabase(flags.databaseUrl ?? env.databaseUrl ?? 'sqlite:./data/restgraph.db');
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
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
      for (const change of plan.changes) out(`  ${change.destructive ? '! ' : '+ '}${change.description}${change.destructive ? '  (destructive)' : ''}`);
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
      if (error instanceof DestructiveMigrationError) {
        process.stderr.write(`restgraph: ${error.message} [${error.code}]\n`);
        return 1;
      }
      throw error;
    }
    out(plan.changes.length === 0 ? 'Nothing to apply.' : 'Applied.');
    return 0;
  }
}
