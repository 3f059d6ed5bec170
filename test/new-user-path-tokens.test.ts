import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { createTestDatabase, ranInSqlitePass } from './helpers/test-database.js';
import { createToken, it, NOTES_SCHEMA, run, tables } from './helpers/new-user.js';
import { CLI_TEST_TIMEOUT_MS } from './helpers/cli-process.js';

/**
 * What a new user does in the first ten minutes, with the CLI in an empty folder and no settings
 * (test/helpers/new-user.ts): token commands before and beside `serve`: which database they
 * open, and what they never create or change.
 * (The other new-user-path-*.test.ts files: new-user-path-busy-port, new-user-path-restart, new-user-path-two-schemas, new-user-path-upgrade.)
 */

/** The tests on SQLite files of their own: the same in both passes, so in the SQLite pass only. */
const onSqliteFiles = it.skipIf(ranInSqlitePass);

describe.concurrent('the new-user path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  onSqliteFiles('token commands open the database of the schema they are given and never migrate it', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const migrated = await run(dir, ['migrate', 'notes.yaml', '-d', 'sqlite:own.db']);
    expect(migrated.code).toBe(0);
    const listed = await run(dir, ['token', 'list', '-d', 'sqlite:own.db']);
    expect(listed.stderr).toBe(`Database: sqlite:${join(dir.path, 'own.db')}\n`);
    expect(listed.code).toBe(0);
    expect(tables(join(dir.path, 'own.db'))).toEqual(['notes']);
  });

  onSqliteFiles('token commands create no database: a mistyped path is one line, and nothing appears', async ({ folder: dir }) => {
    const result = await run(dir, ['token', 'list', '-d', `sqlite:${join(dir.path, 'typo', 'dir', 'x.db')}`]);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(join(dir.path, 'typo', 'dir', 'x.db'));
    expect(existsSync(join(dir.path, 'typo'))).toBe(false);

    const none = await run(dir, ['token', 'create', '--scopes', 'admin']);
    expect(none.code).toBe(1);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
    expect(none.stderr).toContain('npx restgraph serve');
  });

  onSqliteFiles('with only another schema served, a token command without a schema names the command to use', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    expect((await run(dir, ['migrate', 'notes.yaml'])).code).toBe(0);
    const result = await run(dir, ['token', 'create', '--scopes', 'admin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('data/notes.db');
    expect(result.stderr).toContain('npx restgraph token create --scopes admin -d sqlite:./data/notes.db');
    expect(readdirSync(join(dir.path, 'data')).filter((f) => f.endsWith('.db'))).toEqual(['notes.db']);
  });

  it("token commands on the suite's database (SQLite or PostgreSQL): refused before a schema is applied, then working without changing it", async ({ folder: dir }) => {
    const db = await createTestDatabase(dir.path, 'tokens');
    try {
      // An empty SQLite file exists but holds no schema; an empty PostgreSQL schema likewise.
      if (db.file !== undefined) writeFileSync(db.file, '');
      const refused = await run(dir, ['token', 'list', '-d', db.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('holds no restgraph schema');
      expect(refused.stderr).toContain('[RG_DATABASE_NOT_FOUND]');
      expect((await db.tables()).filter((t) => !t.startsWith('_'))).toEqual([]);

      writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
      expect((await run(dir, ['migrate', 'notes.yaml', '-d', db.url])).code).toBe(0);
      const before = await db.tables();
      await createToken(dir, ['notes.yaml', '--scopes', 'notes:read', '-d', db.url]);
      const listed = await run(dir, ['token', 'list', '--json', '-d', db.url]);
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as { scopes: string[] }[]).map((t) => t.scopes)).toEqual([['notes:read']]);
      expect(await db.tables()).toEqual(before);
    } finally {
      await db.drop();
    }
  });

});
