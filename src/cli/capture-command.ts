import { createInterface } from 'node:readline/promises';
import { ConfigError } from '../errors.js';
import { loadSchemaFile } from '../schema/load-schema.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { CAPTURE_OPERATIONS, openCaptureTriggers, type CaptureTable, type CaptureTriggers } from '../store/capture/capture-triggers.js';
import { systemSchemaName } from '../store/system-schema.js';
import { chooseSchema } from './schema-and-database.js';

/**
 * `restgraph capture enable | disable | status`: the triggers that record the writes other programs
 * make to a mapped database's tables, for the server to relay as events
 * (docs/existing-database.md#events-for-writes-made-by-other-programs).
 */
export interface CaptureFlags {
  schemaFile?: string | undefined;
  databaseUrl?: string;
  /** Comma-separated tables (default: every table the schema maps and may write). */
  tables?: string;
  /** enable: install without asking. */
  yes?: boolean;
  /** status: print JSON. */
  json?: boolean;
}

const out = (line: string): boolean => process.stdout.write(`${line}\n`);

/** `capture enable`: prints what it will install, asks (unless --yes), then installs it in one transaction. */
export async function runCaptureEnable(flags: CaptureFlags): Promise<void> {
  await withTriggers(flags, async (triggers, tables) => {
    const missing = await triggers.missing(tables);
    if (missing.length > 0) throw new ConfigError('--tables', `${triggers.description} has no table ${missing.map((t) => `"${t}"`).join(', ')} (a view cannot be captured). Nothing was changed.`);
    const states = await triggers.status(tables);
    const todo = tables.filter((t) => states.find((s) => s.table === t.table)?.current !== true);
    out(`Database: ${triggers.description}`);
    if (todo.length === 0) {
      out(`Capture is already enabled on ${tables.map((t) => t.table).join(', ')}. Nothing to do.`);
      return;
    }
    out(`Capture of inserts, updates and deletes by any program, on ${todo.length} table${todo.length === 1 ? '' : 's'}: ${todo.map((t) => t.table).join(', ')}.`);
    out(`In one transaction, this runs (changed rows are recorded in ${triggers.changesTable}):`);
    for (const statement of await triggers.enableStatements(todo)) out(`  ${statement.replace(/\s+/g, ' ').slice(0, 200)}${statement.length > 200 ? ' …' : ''};`);
    if (flags.yes !== true && !(await confirmed('Install these triggers?'))) {
      out('Nothing was changed.');
      process.exitCode = 1;
      return;
    }
    await triggers.enable(todo);
    out(`Enabled: ${todo.length * CAPTURE_OPERATIONS.length} triggers on ${todo.length} table${todo.length === 1 ? '' : 's'}. Undo with: restgraph capture disable`);
  });
}

/** `capture disable`: removes every capture trigger (and the trigger function), nothing else. */
export async function runCaptureDisable(flags: CaptureFlags): Promise<void> {
  await withTriggers(flags, async (triggers) => {
    out(`Database: ${triggers.description}`);
    const removed = await triggers.disable();
    if (removed.length === 0) out('No capture trigger was installed. Nothing to do.');
    else {
      for (const name of removed) out(`  - trigger ${name}`);
      out(`Disabled: ${removed.length} trigger${removed.length === 1 ? '' : 's'} removed. Changes already captured stay in ${triggers.changesTable} until the server relays them.`);
    }
  });
}

/** `capture status`: each table, the operations captured, and whether the triggers are installed. */
export async function runCaptureStatus(flags: CaptureFlags): Promise<void> {
  await withTriggers(flags, async (triggers, tables) => {
    const states = await triggers.status(tables);
    if (flags.json === true) {
      out(JSON.stringify(states.map((s) => ({ table: s.table, operations: s.installed, state: stateOf(s), mapped: s.mapped })), null, 2));
      return;
    }
    out(`Database: ${triggers.description}`);
    const width = Math.max(5, ...states.map((s) => s.table.length));
    out(`${'table'.padEnd(width)}  ${'operations'.padEnd(22)}  state`);
    for (const s of states) {
      const state = stateOf(s);
      const note = !s.mapped ? ' (a table the schema does not map: capture disable removes it)' : state === 'outdated' ? ' (the table changed since: run capture enable again)' : '';
      out(`${s.table.padEnd(width)}  ${(s.installed.length === 0 ? '-' : s.installed.join(', ')).padEnd(22)}  ${state}${note}`);
    }
  });
}

function stateOf(state: { installed: readonly string[]; current: boolean; mapped: boolean }): string {
  if (state.installed.length === 0) return 'not installed';
  if (state.current || !state.mapped) return state.installed.length === CAPTURE_OPERATIONS.length ? 'installed' : 'partly installed';
  return state.installed.length === CAPTURE_OPERATIONS.length ? 'outdated' : 'partly installed';
}

/** Loads the mapped schema, chooses the tables and opens the database's capture triggers for `work`. */
async function withTriggers(flags: CaptureFlags, work: (triggers: CaptureTriggers, tables: CaptureTable[]) => Promise<void>): Promise<void> {
  const choice = chooseSchema(flags.schemaFile, process.env);
  const schema = loadSchemaFile(choice.path);
  if (schema.mapping === undefined) {
    throw new ConfigError('schema', `${choice.path} does not map an existing database: capture is for the tables of one (database: {existing: true}, written by restgraph init --from). restgraph's own writes have their events already.`);
  }
  const tables = chosenTables(schema, flags.tables);
  const url = flags.databaseUrl ?? (process.env.DATABASE_URL === '' ? undefined : process.env.DATABASE_URL);
  if (url === undefined) throw new ConfigError('-d', 'name the database the schema maps: -d <database-url>, or DATABASE_URL');
  const triggers = await openCaptureTriggers(url, { systemSchema: systemSchemaName(process.env), ...(schema.mapping.schema === undefined ? {} : { databaseSchema: schema.mapping.schema }) });
  try {
    await work(triggers, tables);
  } finally {
    await triggers.close();
  }
}

/** The mapped tables restgraph may write (read-only ones have no key to name a record by), or those --tables names. */
function chosenTables(schema: SchemaModel, list: string | undefined): CaptureTable[] {
  const writable = new Map<string, string>();
  const readOnly = new Set<string>();
  for (const resource of schema.resources.values()) {
    if (resource.mapping === undefined) continue;
    if (resource.mapping.readOnly) readOnly.add(resource.mapping.table);
    else writable.set(resource.mapping.table, resource.name);
  }
  if (list === undefined) return [...writable.keys()].sort().map((table) => ({ table }));
  const named = [...new Set(list.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
  if (named.length === 0 || named.length > 1000) throw new ConfigError('--tables', 'name from 1 to 1000 tables, comma-separated');
  for (const table of named) {
    if (readOnly.has(table)) throw new ConfigError('--tables', `"${table}" is served read-only (a view, or a table without a primary key): its changes cannot name a record`);
    if (!writable.has(table)) throw new ConfigError('--tables', `the schema maps no table "${table}"; it maps ${[...writable.keys()].sort().join(', ')}`);
  }
  return named.map((table) => ({ table }));
}

/** Asks a yes/no question on the terminal. @throws ConfigError naming --yes when standard input is not a terminal */
async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    throw new ConfigError('--yes', 'capture enable asks before it changes the database, and standard input is not a terminal: run it again with --yes to install without asking. Nothing was changed.');
  }
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
  } finally {
    prompt.close();
  }
}
