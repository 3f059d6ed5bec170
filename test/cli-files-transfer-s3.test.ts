import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, itWithFolder } from './helpers/cli-process.js';
import { run, writeSchema } from './helpers/cli-serve.js';
import { FILES_SCHEMA, fileApp, sha256, userWithFiles } from './helpers/file-apps.js';
import { png } from './helpers/files.js';
import { startS3Server } from './helpers/s3-server.js';
import { createTestDatabase } from './helpers/test-database.js';

/**
 * `export data` and `import data` with the server's files in an S3-compatible bucket
 * (docs/files.md#export-import-and-copy), through the CLI as a child process against s3rver in
 * this process: rows and files exported from a local storage, imported into a bucket
 * (`RESTGRAPH_FILES_URL`), exported again from the bucket into a directory, every file the same
 * bytes at each step; and a bucket that does not exist refused, naming the setting.
 */

const it = itWithFolder('restgraph-files-transfer-s3-');

/** SHA-256 of every file of a storage directory (`<dir>/<k[0..2]>/<key>`), by key. */
function directoryHashes(dir: string): Map<string, string> {
  const hashes = new Map<string, string>();
  if (!existsSync(dir)) return hashes;
  for (const shard of readdirSync(dir).filter((name) => name !== 'tmp')) {
    for (const key of readdirSync(join(dir, shard))) hashes.set(key, createHash('sha256').update(readFileSync(join(dir, shard, key))).digest('hex'));
  }
  return hashes;
}

describe('files through export data and import data with S3-compatible storage', () => {
  it(
    'imports an export into a bucket and exports it back, the same bytes',
    async ({ folder }) => {
      const bucket = await startS3Server('rg-transfer');
      const db = await createTestDatabase(folder.path, 'source');
      try {
        const schema = writeSchema(folder, FILES_SCHEMA);
        const filesA = join(folder.path, 'files-a');
        const app = await fileApp(db.url, filesA);
        const hashes = new Map<string, string>();
        try {
          const made = await userWithFiles(app, 'ann', [Buffer.from('hello\n'), Buffer.alloc(300_000, 7)], png(4000));
          for (const [key, bytes] of made.bytes) hashes.set(key, sha256(bytes));
        } finally {
          await app.close();
        }
        const backup = join(folder.path, 'backup.ndjson');
        const exported = await run(folder, ['export', 'data', schema, '-d', db.url, '-o', backup], { RESTGRAPH_FILES_DIR: filesA });
        expect(exported.code, exported.stderr).toBe(0);

        const s3 = {
          RESTGRAPH_FILES_URL: `s3://${bucket.name}/restored`,
          AWS_ENDPOINT_URL: bucket.settings.endpoint ?? '',
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'S3RVER',
          AWS_SECRET_ACCESS_KEY: 'S3RVER',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        };
        const target = `sqlite:${join(folder.path, 'restored.db')}`;
        const imported = await run(folder, ['import', 'data', backup, schema, '-d', target], s3);
        expect(imported.code, imported.stderr).toBe(0);
        expect(imported.stdout).toMatch(/and 3 files/);
        expect((await bucket.keys('restored/')).sort()).toEqual([...hashes.keys()].sort());

        const again = join(folder.path, 'again.ndjson');
        const reexported = await run(folder, ['export', 'data', schema, '-d', target, '-o', again], s3);
        expect(reexported.code, reexported.stderr).toBe(0);
        expect(directoryHashes(`${again}.files`)).toEqual(hashes);

        const missing = await run(folder, ['import', 'data', backup, schema, '-d', `sqlite:${join(folder.path, 'never.db')}`], { ...s3, RESTGRAPH_FILES_URL: 's3://no-such-bucket/x' });
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain('RESTGRAPH_FILES_URL');
        expect(missing.stderr).toContain('no-such-bucket');
      } finally {
        await db.drop();
        await bucket.close();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
