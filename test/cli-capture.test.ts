import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { CLI, CLI_TEST_TIMEOUT_MS, cleanEnv, finish, itWithFolder, startCli, type CliFolder } from './helpers/cli-process.js';
import { createCaptureSample, type CaptureSample } from './helpers/capture-sample.js';

/**
 * `restgraph capture enable | status | disable` as a child process (dist/), on the suite's database
 * with the film-rental sample: enable shows what it installs and asks (refusing without a terminal
 * unless --yes), installs the triggers in one transaction, is idempotent; status lists tables and
 * operations; disable removes exactly the triggers. See docs/existing-database.md.
 */

const it = itWithFolder('rg-cli-capture-');

async function run(folder: CliFolder, sample: CaptureSample, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return finish(startCli(folder.path, args, { RESTGRAPH_SYSTEM_SCHEMA: sample.systemSchema }, folder.children));
}

async function withSample(folder: CliFolder, work: (sample: CaptureSample, schemaFile: string) => Promise<void>): Promise<void> {
  const sample = await createCaptureSample(folder.path);
  try {
    const schemaFile = join(folder.path, 'film-rental.yaml');
    writeFileSync(schemaFile, sample.schemaText);
    await work(sample, schemaFile);
  } finally {
    await sample.drop();
  }
}

async function capturedCount(sample: CaptureSample): Promise<number> {
  const from = sample.database.dialect === 'postgres' ? `"${sample.systemSchema}"._restgraph_captured_changes` : '_restgraph_captured_changes';
  return Number((await sample.database.query<{ n: number | string }>(`select count(*) as n from ${from}`))[0]?.n);
}

async function triggerNames(sample: CaptureSample): Promise<string[]> {
  if (sample.database.dialect === 'sqlite') return (await sample.database.query<{ name: string }>("select name from sqlite_master where type = 'trigger' order by name")).map((r) => r.name);
  return (
    await sample.database.query<{ name: string }>(
      'select t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = ? and not t.tgisinternal order by 1',
      [sample.databaseSchema],
    )
  ).map((r) => r.name);
}

/**
 * Runs the CLI on a terminal of its own (util-linux `script` gives it a pseudo-terminal), typing
 * `answer` and a newline: what a person at the question does. Resolves to the exit code and output.
 */
async function runOnTerminal(folder: CliFolder, sample: CaptureSample, args: string[], answer: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, CLI, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: folder.path, env: cleanEnv({ RESTGRAPH_SYSTEM_SCHEMA: sample.systemSchema }), stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    // Answered once asked: a pseudo-terminal may drop what is typed before the program reads it.
    if (output.includes('[y/N]') && !child.stdin.writableEnded) child.stdin.end(`${answer}\n`);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolveExit) => child.once('close', resolveExit));
  clearTimeout(timer);
  return { code, output };
}

/** SQLite: the file's journal mode (capture leaves it as it is); undefined on PostgreSQL. */
function journalMode(sample: CaptureSample): unknown {
  if (sample.database.file === undefined) return undefined;
  const db = new BetterSqlite3(sample.database.file);
  try {
    return db.pragma('journal_mode', { simple: true });
  } finally {
    db.close();
  }
}

describe.concurrent('restgraph capture', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('enable asks, and refuses without a terminal unless --yes; installs in one go; status and disable', async ({ folder }) => {
    await withSample(folder, async (sample, schemaFile) => {
      const d = ['-d', sample.database.url];
      const journal = journalMode(sample);

      const refused = await run(folder, sample, ['capture', 'enable', schemaFile, ...d, '--tables', 'film,customer']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('restgraph_capture_film_insert');
      expect(refused.stderr).toContain('--yes');
      expect(refused.stderr).toContain('Nothing was changed');
      expect(await triggerNames(sample)).toEqual([]);

      const enabled = await run(folder, sample, ['capture', 'enable', schemaFile, ...d, '--tables', 'film,customer', '--yes']);
      expect(enabled.stderr).toBe('');
      expect(enabled.code).toBe(0);
      expect(enabled.stdout).toContain('Enabled: 6 triggers on 2 tables');
      const names = ['customer', 'film'].flatMap((t) => ['delete', 'insert', 'update'].map((op) => `restgraph_capture_${t}_${op}`));
      expect(await triggerNames(sample)).toEqual(names);
      expect(journalMode(sample)).toBe(journal);

      const again = await run(folder, sample, ['capture', 'enable', schemaFile, ...d, '--tables', 'film,customer']);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('already enabled');

      const status = await run(folder, sample, ['capture', 'status', schemaFile, ...d, '--json']);
      expect(status.code).toBe(0);
      const states = JSON.parse(status.stdout) as { table: string; operations: string[]; state: string }[];
      expect(states.find((s) => s.table === 'film')).toMatchObject({ operations: ['insert', 'update', 'delete'], state: 'installed' });
      expect(states.find((s) => s.table === 'actor')).toMatchObject({ operations: [], state: 'not installed' });
      expect(states.map((s) => s.table)).not.toContain('rental_log');
      const text = await run(folder, sample, ['capture', 'status', schemaFile, ...d]);
      expect(text.stdout).toMatch(/film\s+insert, update, delete\s+installed/);

      await sample.outside("insert into country (country_code, name) values ('FR', 'France')");
      await sample.outside("insert into customer (first_name, last_name, country_code) values ('Ada', 'L', 'FR')");
      expect(await capturedCount(sample)).toBe(1);

      const disabled = await run(folder, sample, ['capture', 'disable', schemaFile, ...d]);
      expect(disabled.code).toBe(0);
      expect(disabled.stdout).toContain('6 triggers removed');
      expect(await triggerNames(sample)).toEqual([]);
      await sample.outside("update customer set last_name = 'Lovelace'");
      expect(await capturedCount(sample)).toBe(1);
      const twice = await run(folder, sample, ['capture', 'disable', schemaFile, ...d]);
      expect(twice.stdout).toContain('Nothing to do');
    });
  });

  it('enable on a terminal asks: no changes nothing, yes installs', async ({ folder }) => {
    await withSample(folder, async (sample, schemaFile) => {
      const args = ['capture', 'enable', schemaFile, '-d', sample.database.url, '--tables', 'language'];
      const declined = await runOnTerminal(folder, sample, args, 'n');
      expect(declined.output).toContain('Install these triggers? [y/N]');
      expect(declined.output).toContain('Nothing was changed.');
      expect(declined.code).toBe(1);
      expect(await triggerNames(sample)).toEqual([]);
      const accepted = await runOnTerminal(folder, sample, args, 'y');
      expect(accepted.output).toContain('Enabled: 3 triggers on 1 table.');
      expect(accepted.code).toBe(0);
      expect(await triggerNames(sample)).toEqual(['restgraph_capture_language_delete', 'restgraph_capture_language_insert', 'restgraph_capture_language_update']);
    });
  });

  it('refuses a schema that maps no database, a read-only or unknown table, a missing database URL and a bad system schema name', async ({ folder }) => {
    await withSample(folder, async (sample, schemaFile) => {
      const d = ['-d', sample.database.url];
      const example = await run(folder, sample, ['capture', 'status', ...d]);
      expect(example.code).toBe(1);
      expect(example.stderr).toContain('does not map an existing database');
      const readOnly = await run(folder, sample, ['capture', 'enable', schemaFile, ...d, '--tables', 'rental_log', '--yes']);
      expect(readOnly.code).toBe(1);
      expect(readOnly.stderr).toContain('read-only');
      const unknown = await run(folder, sample, ['capture', 'enable', schemaFile, ...d, '--tables', 'films', '--yes']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('maps no table "films"');
      const badSystem = await finish(startCli(folder.path, ['capture', 'status', schemaFile, ...d], { RESTGRAPH_SYSTEM_SCHEMA: 'Bad-Name' }, folder.children));
      expect(badSystem.code).toBe(1);
      expect(badSystem.stderr).toContain('RESTGRAPH_SYSTEM_SCHEMA');
      const noUrl = await run(folder, sample, ['capture', 'status', schemaFile]);
      expect(noUrl.code).toBe(1);
      expect(noUrl.stderr).toContain('-d <database-url>');
      expect(await triggerNames(sample)).toEqual([]);
    });
  });

  // The whole path, through the relay started with the server (webhook, GraphQL subscription,
  // /v1/events, each exactly once): test/capture-serve.test.ts.
});
