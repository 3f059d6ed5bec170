import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { keyOf } from '../src/core/file-fields.js';
import { defaultFilesDir } from '../src/files/create-file-storage.js';
import { CLI_TEST_TIMEOUT_MS, type CliFolder, itWithFolder } from './helpers/cli-process.js';
import { run, writeSchema } from './helpers/cli-serve.js';
import { downloadedHashes, FILES_SCHEMA, fileApp, type FileUser, sha256, userWithFiles } from './helpers/file-apps.js';
import { png, storedFiles } from './helpers/files.js';
import { json } from './helpers/test-app.js';
import { createDatabaseOf, createTestDatabase, ranInSqlitePass, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * Files carried by `export data`, `import data` and `copy` (docs/files.md#export-import-and-copy),
 * through the CLI as a child process: a database of the suite's kind with uploaded files, exported
 * and imported into a fresh database and a fresh storage directory, each file then downloaded
 * through the API byte-identical; a copy into a database of the other kind (SQLite → PostgreSQL
 * in the SQLite pass, the reverse in the PostgreSQL pass); a file missing from storage; hostile
 * exports (a key with `../`, a key not of restgraph's form, a file of another size).
 */

const it = itWithFolder('restgraph-files-transfer-');
const OTHER: 'sqlite' | 'postgres' = TEST_DIALECT === 'sqlite' ? 'postgres' : 'sqlite';

/** A source database of the suite's kind holding two users with files; its storage is `filesDir`. */
async function source(folder: CliFolder, filesDir: string | undefined): Promise<{ db: TestDatabase; users: FileUser[]; hashes: Map<string, string> }> {
  const db = await createTestDatabase(folder.path, 'source');
  const app = await fileApp(db.url, filesDir);
  const users: FileUser[] = [];
  const hashes = new Map<string, string>();
  try {
    // A 3 MB attachment: more than one stream chunk, so the copy is streamed in pieces.
    for (const [name, attachments] of [
      ['ann', [randomBytes(3 * 1024 * 1024), Buffer.from('hello\n')]],
      ['bob', [randomBytes(1000)]],
    ] as const) {
      const made = await userWithFiles(app, name, [...attachments], png(5000));
      users.push(made.user);
      for (const [key, bytes] of made.bytes) hashes.set(key, sha256(bytes));
    }
  } finally {
    await app.close();
  }
  return { db, users, hashes };
}

/** Each user as the app on (url, filesDir) shows it, and the SHA-256 of every file it downloads. */
async function served(url: string, filesDir: string, users: FileUser[]): Promise<{ users: FileUser[]; hashes: Map<string, string> }> {
  const app = await fileApp(url, filesDir);
  try {
    const shown: FileUser[] = [];
    const hashes = new Map<string, string>();
    for (const user of users) {
      const now = json<FileUser>(await app.inject({ url: `/users/${user.id}` }));
      shown.push(now);
      for (const [key, hash] of await downloadedHashes(app, now)) hashes.set(key, hash);
    }
    return { users: shown, hashes };
  } finally {
    await app.close();
  }
}

describe('files through export data, import data and copy', () => {
  it(
    'exports the files beside the rows, imports them into a fresh database and storage, and they download byte-identical',
    async ({ folder }) => {
      const schema = writeSchema(folder, FILES_SCHEMA);
      const filesA = join(folder.path, 'files-a');
      const { db, users, hashes } = await source(folder, filesA);
      try {
        const backup = join(folder.path, 'backup.ndjson');
        const exported = await run(folder, ['export', 'data', schema, '-d', db.url, '-o', backup], { RESTGRAPH_FILES_DIR: filesA });
        expect(exported.code, exported.stderr).toBe(0);
        expect(exported.stderr).toMatch(/Exported 2 records and 5 files \(\d+ bytes, in .*backup\.ndjson\.files\) to .*backup\.ndjson\./);
        expect(storedFiles(`${backup}.files`)).toEqual([...hashes.keys()].sort());

        // A fresh database (SQLite) and a fresh storage directory.
        const filesB = join(folder.path, 'files-b');
        const target = `sqlite:${join(folder.path, 'restored.db')}`;
        const imported = await run(folder, ['import', 'data', backup, schema, '-d', target], { RESTGRAPH_FILES_DIR: filesB });
        expect(imported.code, imported.stderr).toBe(0);
        expect(imported.stdout).toMatch(/^Imported 2 records \(users 2\) and 5 files \(\d+ bytes\) into /);
        const after = await served(target, filesB, users);
        expect(after.users).toEqual(users);
        expect(after.hashes).toEqual(hashes);

        // Again into another fresh database, the same storage: the files are there already, under their keys.
        const again = await run(folder, ['import', 'data', backup, schema, '-d', `sqlite:${join(folder.path, 'again.db')}`], { RESTGRAPH_FILES_DIR: filesB });
        expect(again.code, again.stderr).toBe(0);
        expect(storedFiles(filesB)).toEqual([...hashes.keys()].sort());

        // To stdout, an export must say where its files go; with --files they go there.
        const toStdout = await run(folder, ['export', 'data', schema, '-d', db.url], { RESTGRAPH_FILES_DIR: filesA });
        expect(toStdout.code).toBe(1);
        expect(toStdout.stderr).toContain('--files');
        expect(toStdout.stderr).toContain('RG_CONFIG_INVALID');
        expect(toStdout.stdout).toBe('');
        const named = await run(folder, ['export', 'data', schema, '-d', db.url, '--files', join(folder.path, 'elsewhere')], { RESTGRAPH_FILES_DIR: filesA });
        expect(named.code, named.stderr).toBe(0);
        expect(named.stdout.trim().split('\n')).toHaveLength(2);
        expect(storedFiles(join(folder.path, 'elsewhere'))).toEqual([...hashes.keys()].sort());
        const rowsOnly = await run(folder, ['export', 'data', schema, '-d', db.url, '--no-files'], { RESTGRAPH_FILES_DIR: filesA });
        expect(rowsOnly.code, rowsOnly.stderr).toBe(0);
        expect(rowsOnly.stdout.trim().split('\n')).toHaveLength(2);
      } finally {
        await db.drop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    `copies the files with the rows, ${TEST_DIALECT} to ${OTHER}, each side's storage where its server keeps it unless named`,
    async ({ folder }) => {
      // SQLite's storage is the default beside its database file; PostgreSQL's is named.
      const sourceFiles = TEST_DIALECT === 'sqlite' ? undefined : join(folder.path, 'source-files');
      const { db, users, hashes } = await source(folder, sourceFiles);
      const target = await createDatabaseOf(OTHER, folder.path, 'target');
      try {
        const targetFiles = OTHER === 'sqlite' ? defaultFilesDir(target.url) : join(folder.path, 'target-files');
        const args = ['copy', '--from', db.url, '--to', target.url, ...(sourceFiles === undefined ? [] : ['--from-files', sourceFiles]), ...(OTHER === 'sqlite' ? [] : ['--to-files', targetFiles])];
        const copied = await run(folder, args);
        expect(copied.code, copied.stderr).toBe(0);
        expect(copied.stdout).toMatch(/\n {2}files +5 \(\d+ bytes\)\n/);
        expect(storedFiles(targetFiles)).toEqual([...hashes.keys()].sort());
        const after = await served(target.url, targetFiles, users);
        expect(after.users).toEqual(users);
        expect(after.hashes).toEqual(hashes);
      } finally {
        await target.drop();
        await db.drop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'names a file missing from storage: export and copy refuse, and write nothing; allowed, the import rejects its row or leaves the file out',
    async ({ folder }) => {
      const schema = writeSchema(folder, FILES_SCHEMA);
      const filesA = join(folder.path, 'files-a');
      const { db, users } = await source(folder, filesA);
      const target = await createDatabaseOf(OTHER, folder.path, 'target');
      try {
        const lost = keyOf(users[1]?.avatar) as string;
        rmSync(join(filesA, lost.slice(0, 2), lost));
        const backup = join(folder.path, 'backup.ndjson');
        const refused = await run(folder, ['export', 'data', schema, '-d', db.url, '-o', backup], { RESTGRAPH_FILES_DIR: filesA });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('RG_FILES_MISSING');
        expect(refused.stderr).toContain(`users ${users[1]?.id} /avatar: its file ${lost} (me.png) is not in the file storage ${filesA}`);
        expect(existsSync(backup)).toBe(false);
        // The files it had carried before the refusal are gone again.
        expect(storedFiles(`${backup}.files`)).toEqual([]);

        const copy = await run(folder, ['copy', '--from', db.url, '--to', target.url, '--from-files', filesA, '--to-files', join(folder.path, 'copied-files')]);
        expect(copy.code).toBe(1);
        expect(copy.stderr).toContain('RG_FILES_MISSING');
        expect(copy.stderr).toContain(`users ${users[1]?.id} /avatar: its file ${lost}`);
        // No row: a SQLite target the copy created is removed again; a PostgreSQL one has its tables, empty.
        if (target.file !== undefined) expect(existsSync(target.file)).toBe(false);
        else expect(await target.query('select count(*) as n from "users"')).toEqual([{ n: 0 }]);
        expect(storedFiles(join(folder.path, 'copied-files'))).toEqual([]);

        const allowed = await run(folder, ['export', 'data', schema, '-d', db.url, '-o', backup, '--allow-missing-files'], { RESTGRAPH_FILES_DIR: filesA });
        expect(allowed.code, allowed.stderr).toBe(0);
        expect(allowed.stderr).toContain(`Exporting without 1 file the rows reference`);
        expect(allowed.stderr).toContain(lost);

        const restored = `sqlite:${join(folder.path, 'restored.db')}`;
        const filesB = join(folder.path, 'files-b');
        const rejected = await run(folder, ['import', 'data', backup, schema, '-d', restored], { RESTGRAPH_FILES_DIR: filesB });
        expect(rejected.code).toBe(1);
        expect(rejected.stderr).toContain(`line 2 (users): /avatar: its file ${lost} (me.png) is not in the export's files ${backup}.files`);
        expect(rejected.stderr).toContain('RG_IMPORT_REJECTED');
        // Nothing committed, and the files it had stored are gone again.
        expect(storedFiles(filesB)).toEqual([]);

        const nulled = await run(folder, ['import', 'data', backup, schema, '-d', restored, '--null-missing-files'], { RESTGRAPH_FILES_DIR: filesB });
        expect(nulled.code, nulled.stderr).toBe(0);
        expect(nulled.stderr).toContain('line 2 (users): 1 missing file left out');
        const after = await served(restored, filesB, users);
        expect(after.users[1]?.avatar).toBeNull();
        expect(after.users[1]?.attachments).toEqual(users[1]?.attachments);
        expect(after.users[0]).toEqual(users[0]);
      } finally {
        await target.drop();
        await db.drop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  // Into a SQLite file of its own: the same in both passes, so in the SQLite pass only.
  it.skipIf(ranInSqlitePass)(
    'refuses a hostile export: a key with ../, a key not of restgraph’s form, a file of another size than its value says',
    async ({ folder }) => {
      const schema = writeSchema(folder, FILES_SCHEMA);
      const backup = join(folder.path, 'hostile.ndjson');
      const key = 'AAAAAAAAAAAAAAAAAAAAAA';
      const file = (etag: string, size = 5) => ({ name: 'x.txt', type: 'text/plain', size, url: '/users/1/avatar', etag });
      const line = (id: number, avatar: unknown, attachments: unknown[] = []) =>
        JSON.stringify({ resource: 'users', record: { id, name: 'x', avatar, attachments, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' } });
      // The export's storage holds the file under the good key, with 5 bytes; and a planted file outside it.
      const exportFiles = `${backup}.files`;
      writeFileSync(join(folder.path, 'secret'), 'secret');
      const shard = join(exportFiles, key.slice(0, 2));
      mkdirSync(shard, { recursive: true });
      writeFileSync(join(shard, key), 'hello');
      writeFileSync(
        backup,
        [
          line(1, file('"../secret"')),
          line(2, file('"../../etc/passwd"')),
          line(3, file('"abc"')),
          line(4, file(`"${key}"`, 4)),
          line(5, { ...file(`"${key}"`), name: '../../x.txt' }),
          line(6, null, [file(`"${key}"`), file(`"${key}"`)]),
          line(7, { ...file(`"${key}"`), url: 'javascript:alert(1)' }),
        ].join('\n') + '\n',
      );
      const filesB = join(folder.path, 'files-b');
      const restored = `sqlite:${join(folder.path, 'restored.db')}`;
      const refused = await run(folder, ['import', 'data', backup, schema, '-d', restored], { RESTGRAPH_FILES_DIR: filesB });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('7 rows were rejected');
      expect(refused.stderr).toContain('line 1 (users): /avatar: is not a file value restgraph wrote: its etag must quote a storage key');
      expect(refused.stderr).toContain('line 2 (users): /avatar: is not a file value restgraph wrote: its etag must quote a storage key');
      expect(refused.stderr).toContain('line 3 (users): /avatar: is not a file value restgraph wrote: its etag must quote a storage key');
      expect(refused.stderr).toContain(`line 4 (users): /avatar: its file ${key} (x.txt) has 5 bytes in the export's files ${exportFiles}, not the 4 its value says`);
      expect(refused.stderr).toContain('line 5 (users): /avatar: is not a file value restgraph wrote: its name');
      expect(refused.stderr).toContain(`line 6 (users): /attachments: holds the file ${key} twice`);
      expect(refused.stderr).toContain('line 7 (users): /avatar: is not a file value restgraph wrote: its url');
      expect(storedFiles(filesB)).toEqual([]);
      expect(readFileSync(join(folder.path, 'secret'), 'utf8')).toBe('secret');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
