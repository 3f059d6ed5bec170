import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, itWithFolder } from './helpers/cli-process.js';
import { run, start, writeSchema } from './helpers/cli-serve.js';
import { createTestDatabase, onlyOnSqlite } from './helpers/test-database.js';

/**
 * Where `restgraph export data -o <file>` writes, as a child process: never over the database it
 * exports (nor its -wal, -shm or -journal file), however the path is written; and never a half
 * file under the name asked for: the export goes to a temporary file of the same folder, renamed
 * at the end, so an export that fails or is killed part-way leaves no file by that name.
 */

const it = itWithFolder('restgraph-export-');

const SCHEMA = `
resources:
  notes:
    access: { read: public, write: public }
    fields:
      body:  { type: string }
      size:  { type: integer }
      meta:  { type: json }
`;

/** `n` notes as an export file, each line long enough that a few hundred fill a write. */
function notes(n: number): string {
  const lines: string[] = [];
  for (let id = 1; id <= n; id++) lines.push(JSON.stringify({ resource: 'notes', record: { id, body: `note ${id} ${'x'.repeat(200)}`, size: id, meta: { id } } }));
  return `${lines.join('\n')}\n`;
}

const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

describe.concurrent('export data -o', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it.skipIf(onlyOnSqlite)('refuses the database file and its -wal, -shm and -journal files, however written, and changes none', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    writeFileSync(join(dir.path, 'data.ndjson'), notes(20));
    expect((await run(dir, ['import', 'data', 'data.ndjson', schema, '-d', 'sqlite:./app.db'])).code).toBe(0);
    const file = join(dir.path, 'app.db');
    symlinkSync(file, join(dir.path, 'link.db'));
    const before = sha(file);
    for (const output of ['app.db', './app.db', file, `${dir.path}/./sub/../app.db`, 'link.db', 'app.db-wal', `${file}-shm`, './app.db-journal']) {
      const result = await run(dir, ['export', 'data', schema, '-d', 'sqlite:app.db', '-o', output]);
      expect(result.stderr, output).toBe(`restgraph: Invalid configuration --output: ${output} is the database being exported (${file}) or one of its files; write the export to another file [RG_CONFIG_INVALID]\n`);
      expect(result.code).toBe(1);
      expect(sha(file)).toBe(before);
    }
    expect(readdirSync(dir.path).filter((f) => !f.startsWith('app.db')).sort()).toEqual(['data.ndjson', 'link.db', 'schema.yaml']);
  });

  it('writes the file under its name only once complete: an export that fails part-way leaves no file by that name, nor its temporary file', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const db = await createTestDatabase(dir.path);
    try {
      writeFileSync(join(dir.path, 'data.ndjson'), notes(3000));
      expect((await run(dir, ['import', 'data', 'data.ndjson', schema, '-d', db.url])).code).toBe(0);
      // A row the export cannot read, far enough in that earlier rows were written out.
      await db.run('update "notes" set "size" = 9007199254740993 where "id" = 2900');
      writeFileSync(join(dir.path, 'backup.ndjson'), 'the previous backup\n');
      const failed = await run(dir, ['export', 'data', schema, '-d', db.url, '-o', 'backup.ndjson']);
      expect(failed.code, failed.stderr).toBe(1);
      // The file of that name is the one that was there; nothing else is left behind.
      expect(readFileSync(join(dir.path, 'backup.ndjson'), 'utf8')).toBe('the previous backup\n');
      const fresh = await run(dir, ['export', 'data', schema, '-d', db.url, '-o', 'new.ndjson']);
      expect(fresh.code).toBe(1);
      expect(existsSync(join(dir.path, 'new.ndjson'))).toBe(false);
      expect(readdirSync(dir.path).filter((f) => !f.startsWith('test.db')).sort()).toEqual(['backup.ndjson', 'data.ndjson', 'schema.yaml']);

      await db.run('update "notes" set "size" = 1 where "id" = 2900');
      const done = await run(dir, ['export', 'data', schema, '-d', db.url, '-o', 'backup.ndjson']);
      expect(done.stderr).toBe('Exported 3000 records to backup.ndjson.\n');
      expect(readFileSync(join(dir.path, 'backup.ndjson'), 'utf8').split('\n')).toHaveLength(3001);
    } finally {
      await db.drop();
    }
  });

  it('an export killed part-way leaves no file by the name asked for', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const db = await createTestDatabase(dir.path);
    try {
      writeFileSync(join(dir.path, 'data.ndjson'), notes(40_000));
      expect((await run(dir, ['import', 'data', 'data.ndjson', schema, '-d', db.url])).code).toBe(0);
      const exporting = start(dir, ['export', 'data', schema, '-d', db.url, '-o', 'backup.ndjson']);
      // Killed once it has written part of the export (to whichever file it writes).
      const partial = (): boolean => readdirSync(dir.path).some((f) => f.includes('backup.ndjson') && statSync(join(dir.path, f), { throwIfNoEntry: false })?.size !== 0);
      while (!partial() && exporting.child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
      expect(exporting.child.exitCode, 'the export finished before it could be killed: export more rows').toBe(null);
      exporting.child.kill('SIGKILL');
      await exporting.exited;
      expect(existsSync(join(dir.path, 'backup.ndjson'))).toBe(false);
    } finally {
      await db.drop();
    }
  });
});
