import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { ACCOUNTS_SCHEMA } from './helpers/accounts-schema.js';
import { CLI_TEST_TIMEOUT_MS, itWithFolder } from './helpers/cli-process.js';
import { run, writeSchema } from './helpers/cli-serve.js';
import { createTestDatabase } from './helpers/test-database.js';

/** `restgraph import data` folds an email identifier's case like every other write (docs/accounts.md#email-identifiers-ignore-case). */

const it = itWithFolder('restgraph-identifier-import-');
const T = '2026-01-02T03:04:05.678Z';
const line = (record: Record<string, unknown>): string => JSON.stringify({ resource: 'users', record: { role: 'member', createdAt: T, updatedAt: T, ...record } });

describe.concurrent('import data and email identifiers', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('stores the identifier lower-cased; two that differ only by case are one address, refused', async ({ folder: dir }) => {
    const schema = writeSchema(dir, ACCOUNTS_SCHEMA);
    writeFileSync(join(dir.path, 'one.ndjson'), `${line({ id: 1, email: 'Ann@Example.COM' })}\n`);
    writeFileSync(join(dir.path, 'two.ndjson'), `${line({ id: 1, email: 'bob@example.com' })}\n${line({ id: 2, email: 'BOB@example.com' })}\n`);
    const db = await createTestDatabase(dir.path, 'one');
    const other = await createTestDatabase(dir.path, 'two');
    try {
      const loaded = await run(dir, ['import', 'data', 'one.ndjson', schema, '-d', db.url]);
      expect(loaded.stderr).toBe('');
      expect(loaded.code).toBe(0);
      expect(await db.query('select "email" from "users"')).toEqual([{ email: 'ann@example.com' }]);

      const clash = await run(dir, ['import', 'data', 'two.ndjson', schema, '-d', other.url]);
      expect(clash.code).not.toBe(0);
      expect(clash.stderr).toMatch(/email/);
    } finally {
      await db.drop();
      await other.drop();
    }
  });
});
