import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, type CliFolder, itWithFolder } from './helpers/cli-process.js';
import { run, writeSchema } from './helpers/cli-serve.js';
import { fileApp, FILES_SCHEMA } from './helpers/file-apps.js';
import { storedFiles } from './helpers/files.js';
import { createTestDatabase } from './helpers/test-database.js';

/**
 * `import data` refuses a row whose file another row references (docs/files.md#export-import-and-copy):
 * deleting one of them would delete the file the other still points at. Within one import (the
 * keys seen) and against the rows already in the database (`--allow-existing-rows`, a query on
 * the file columns); through the CLI as a child process, into a database of the suite's kind.
 */

const it = itWithFolder('restgraph-files-shared-');
const KEY_A = 'AAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'BBBBBBBBBB_BBBBBBBBBBB';

const file = (key: string, name = 'x.txt') => ({ name, type: 'text/plain', size: 5, etag: `"${key}"` });
const line = (id: number, avatar: object) => JSON.stringify({ resource: 'users', record: { id, name: 'x', avatar: { ...avatar, url: `/users/${id}/avatar` }, attachments: [], createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' } });

/** An export at `<folder>/<name>.ndjson` of `lines`, its files directory holding KEY_A and KEY_B (5 bytes each). */
function exportOf(folder: CliFolder, name: string, lines: string[]): string {
  const backup = join(folder.path, `${name}.ndjson`);
  for (const key of [KEY_A, KEY_B]) {
    const shard = join(`${backup}.files`, key.slice(0, 2));
    mkdirSync(shard, { recursive: true });
    writeFileSync(join(shard, key), 'hello');
  }
  writeFileSync(backup, lines.join('\n') + '\n');
  return backup;
}

describe('import data and files two rows would share', () => {
  it(
    'refuses the second row of one import that references a file the first does',
    async ({ folder }) => {
      const schema = writeSchema(folder, FILES_SCHEMA);
      const db = await createTestDatabase(folder.path, 'target');
      const files = join(folder.path, 'files');
      try {
        const backup = exportOf(folder, 'twice', [line(1, file(KEY_A)), line(2, file(KEY_B)), line(3, file(KEY_A))]);
        const refused = await run(folder, ['import', 'data', backup, schema, '-d', db.url], { RESTGRAPH_FILES_DIR: files });
        expect(refused.code, refused.stderr).toBe(1);
        expect(refused.stderr).toContain('1 row was rejected');
        expect(refused.stderr).toContain(`line 3 (users): file key ${KEY_A} already used by the row on line 1`);
        // Nothing committed: the files stored for it are gone too.
        expect(storedFiles(files)).toEqual([]);
      } finally {
        await db.drop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'refuses a row that references a file a row already in the database references (--allow-existing-rows)',
    async ({ folder }) => {
      const schema = writeSchema(folder, FILES_SCHEMA);
      const db = await createTestDatabase(folder.path, 'target');
      const files = join(folder.path, 'files');
      try {
        // The row in the database holds KEY_A, and the text of KEY_B in its file's name (not a reference).
        const first = exportOf(folder, 'first', [line(1, file(KEY_A, `${KEY_B}.txt`))]);
        const imported = await run(folder, ['import', 'data', first, schema, '-d', db.url], { RESTGRAPH_FILES_DIR: files });
        expect(imported.code, imported.stderr).toBe(0);

        const second = exportOf(folder, 'second', [line(2, file(KEY_B)), line(3, file(KEY_A))]);
        const refused = await run(folder, ['import', 'data', second, schema, '-d', db.url, '--allow-existing-rows'], { RESTGRAPH_FILES_DIR: files });
        expect(refused.code, refused.stderr).toBe(1);
        expect(refused.stderr).toContain('1 row was rejected');
        expect(refused.stderr).toContain(`line 2 (users): file key ${KEY_A} already used by user 1 in the database`);

        // With --skip-invalid the other row goes in; deleting the first row leaves its file to no one.
        const skipped = await run(folder, ['import', 'data', second, schema, '-d', db.url, '--allow-existing-rows', '--skip-invalid'], { RESTGRAPH_FILES_DIR: files });
        expect(skipped.code, skipped.stderr).toBe(0);
        const app = await fileApp(db.url, files);
        try {
          expect((await app.inject({ method: 'DELETE', url: '/users/1' })).statusCode).toBe(204);
          expect((await app.inject({ url: '/users/2/avatar' })).body).toBe('hello');
          expect((await app.inject({ url: '/users/3' })).statusCode).toBe(404);
        } finally {
          await app.close();
        }
      } finally {
        await db.drop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
