import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, itWithFolder } from './helpers/cli-process.js';
import { run, writeSchema } from './helpers/cli-serve.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * `restgraph import` through the CLI, as child processes, on the suite's database: what it
 * rejects and how it says so (references found missing at the end and the rows pointing at rows
 * taken out, unique values, impossible date-times, long lists of rejections), and the limits of
 * its input (a CSV record's size, a resource named data).
 */

const it = itWithFolder('restgraph-import-rejections-');

const line = (resource: string, record: Record<string, unknown>): string => JSON.stringify({ resource, record });

async function count(db: TestDatabase, table: string): Promise<number> {
  return Number((await db.query<{ n: number }>(`select count(*) as "n" from "${table}"`))[0]?.n);
}

const LINKED = `
resources:
  people:
    access: { read: public, write: public }
    fields:
      name:     { type: string, required: true, minLength: 1 }
      email:    { type: string, unique: true }
      parentId: { type: integer, references: people }
  notes:
    access: { read: public, write: public }
    fields:
      text:     { type: string, required: true }
      authorId: { type: integer, required: true, references: people }
      editorId: { type: integer, references: people }
`;

describe.concurrent('import: references, unique values and limits', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a row with a second reference that points nowhere is rejected, and so is every row pointing at a row taken out', async ({ folder: dir }) => {
    const schema = writeSchema(dir, LINKED);
    writeFileSync(
      join(dir.path, 'linked.ndjson'),
      [
        // Its first reference is found later in the file; its second points nowhere.
        line('notes', { id: 1, text: 'two refs', authorId: 2, editorId: 404 }),
        line('people', { id: 2, name: 'Ann' }),
        // A chain: 5 → 4 → 3, and 3 is invalid; note 2 points at 5.
        line('people', { id: 5, name: 'Eve', parentId: 4 }),
        line('people', { id: 4, name: 'Dan', parentId: 3 }),
        line('people', { id: 3, name: '' }),
        line('notes', { id: 2, text: 'on Eve', authorId: 5 }),
        line('notes', { text: 'no id, on Dan', authorId: 4 }),
        line('notes', { id: 3, text: 'fine', authorId: 2, editorId: 2 }),
      ].join('\n'),
    );
    const db = await createTestDatabase(dir.path);
    try {
      const refused = await run(dir, ['import', 'data', 'linked.ndjson', schema, '-d', db.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('  line 1 (notes): /editorId: people 404 does not exist (neither in the database nor in the import)\n');
      expect(refused.stderr).toContain('  line 5 (people): /name: must be at least 1 characters long\n');
      expect(await count(db, 'notes')).toBe(0);

      const skipped = await run(dir, ['import', 'data', 'linked.ndjson', schema, '-d', db.url, '--skip-invalid']);
      expect(skipped.code).toBe(0);
      expect(skipped.stderr).toBe(
        [
          'Skipped 6 rejected rows:',
          '  line 1 (notes): /editorId: people 404 does not exist (neither in the database nor in the import)',
          '  line 3 (people): /parentId: people 4 does not exist (neither in the database nor in the import)',
          '  line 4 (people): /parentId: people 3 does not exist (neither in the database nor in the import)',
          '  line 5 (people): /name: must be at least 1 characters long',
          '  line 6 (notes): /authorId: people 5 does not exist (neither in the database nor in the import)',
          '  line 7 (notes): /authorId: people 4 does not exist (neither in the database nor in the import)',
          '',
        ].join('\n'),
      );
      expect(await db.query('select "id", "name" from "people" order by "id"')).toEqual([{ id: 2, name: 'Ann' }]);
      expect(await db.query('select "id", "authorId", "editorId" from "notes" order by "id"')).toEqual([{ id: 3, authorId: 2, editorId: 2 }]);
    } finally {
      await db.drop();
    }
  });

  it('a unique value taken in the file or in the table is a rejected line, not a failure', async ({ folder: dir }) => {
    const schema = writeSchema(dir, LINKED);
    writeFileSync(join(dir.path, 'first.csv'), 'name,email\nAnn,ann@example.com\n');
    writeFileSync(join(dir.path, 'people.csv'), 'name,email\nBob,bob@example.com\nAnn again,ann@example.com\nBob again,bob@example.com\nCid,\nDee,\n');
    const db = await createTestDatabase(dir.path);
    try {
      expect((await run(dir, ['import', 'people', 'first.csv', schema, '-d', db.url])).code).toBe(0);
      const refused = await run(dir, ['import', 'people', 'people.csv', schema, '-d', db.url]);
      expect(refused.stderr).toBe(
        [
          '  line 3 (people): /email: ann@example.com is already taken (unique)',
          '  line 4 (people): /email: bob@example.com is already taken (unique)',
          'restgraph: 2 rows were rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]',
          '',
        ].join('\n'),
      );
      expect(refused.code).toBe(1);
      const skipped = await run(dir, ['import', 'people', 'people.csv', schema, '-d', db.url, '--skip-invalid']);
      expect(skipped.code).toBe(0);
      expect(await db.query('select "name", "email" from "people" order by "id"')).toEqual([
        { name: 'Ann', email: 'ann@example.com' },
        { name: 'Bob', email: 'bob@example.com' },
        { name: 'Cid', email: null },
        { name: 'Dee', email: null },
      ]);
    } finally {
      await db.drop();
    }
  });

  it('an impossible date-time is rejected; a list of thousands of rejected rows is cut short; an unwritable output is an error', async ({ folder: dir }) => {
    const schema = writeSchema(dir, LINKED);
    writeFileSync(join(dir.path, 'times.ndjson'), [line('people', { id: 1, name: 'Feb', createdAt: '2024-02-30T00:00:00Z' }), line('people', { id: 2, name: 'Leap', createdAt: '2024-02-29T00:00:00Z' })].join('\n'));
    writeFileSync(join(dir.path, 'many.ndjson'), Array.from({ length: 1500 }, (_, i) => `{"name": ${i}}`).join('\n'));
    const db = await createTestDatabase(dir.path);
    try {
      const times = await run(dir, ['import', 'data', 'times.ndjson', schema, '-d', db.url]);
      expect(times.stderr).toContain('  line 1 (people): /createdAt: must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)\n');
      expect(times.stderr).not.toContain('line 2');

      const many = await run(dir, ['import', 'people', 'many.ndjson', schema, '-d', db.url]);
      expect(many.code).toBe(1);
      const lines = many.stderr.trim().split('\n');
      expect(lines).toHaveLength(1002);
      expect(lines[999]).toBe('  line 1000 (people): /name: must be a string');
      expect(lines[1000]).toBe('  … and 500 more rejected rows');
      expect(lines[1001]).toBe('restgraph: 1500 rows were rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]');

      const unwritable = await run(dir, ['export', 'data', schema, '-d', db.url, '-o', join(dir.path, 'missing-folder', 'out.ndjson')]);
      expect(unwritable.code).toBe(1);
      expect(unwritable.stderr).toMatch(/^restgraph: Invalid configuration --output: cannot write .*missing-folder.* \(ENOENT\) \[RG_CONFIG_INVALID\]\n$/);
    } finally {
      await db.drop();
    }
  });
});

describe.concurrent('import: input limits and names', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a CSV record past 16 MiB ends the reading with a rejected line, not a process out of memory', async ({ folder: dir }) => {
    const schema = writeSchema(dir, LINKED);
    writeFileSync(join(dir.path, 'big.csv'), `name,email\nAnn,ann@example.com\n"${'x'.repeat(17 * 1024 * 1024)}",\n`);
    const db = await createTestDatabase(dir.path);
    try {
      const result = await run(dir, ['import', 'people', 'big.csv', schema, '-d', db.url]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^ {2}line \d+ \(people\): is not valid CSV \(Max Record Size: .*16777216.*\); the rows after it were not read\n/);
      expect(await count(db, 'people')).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it('a resource named data: import data <file.csv> loads its records; an export file is still a whole import', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  data:\n    access: { read: public, write: public }\n    fields:\n      value: { type: integer, required: true }\n');
    writeFileSync(join(dir.path, 'values.csv'), 'value\n1\n2\n');
    writeFileSync(join(dir.path, 'backup.ndjson'), `${line('data', { id: 7, value: 3 })}\n`);
    const db = await createTestDatabase(dir.path);
    const other = await createTestDatabase(dir.path, 'other');
    try {
      const csv = await run(dir, ['import', 'data', 'values.csv', schema, '-d', db.url]);
      expect(csv.stderr).toBe('');
      expect(csv.stdout).toMatch(/^Imported 2 records \(data 2\) into /);
      const whole = await run(dir, ['import', 'data', 'backup.ndjson', schema, '-d', other.url]);
      expect(whole.stdout).toMatch(/^Imported 1 record \(data 1\) into /);
      expect(await other.query('select "id", "value" from "data"')).toEqual([{ id: 7, value: 3 }]);
    } finally {
      await db.drop();
      await other.drop();
    }
  });

  it('a row a constraint of the database refuses (a unique index the schema does not declare) is rejected with its line; the other rows of its batch go in', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  slots:\n    access: { read: public, write: public }\n    fields:\n      warehouse: { type: string }\n      shelf: { type: string }\n');
    writeFileSync(
      join(dir.path, 'slots.ndjson'),
      [line('slots', { id: 1, warehouse: 'north', shelf: 'A1' }), line('slots', { id: 2, warehouse: 'north', shelf: 'A1' }), line('slots', { warehouse: 'south', shelf: 'A1' })].join('\n'),
    );
    const db = await createTestDatabase(dir.path);
    try {
      expect((await run(dir, ['migrate', schema, '-d', db.url])).code).toBe(0);
      await db.run('create unique index "shelf_slot" on "slots" ("warehouse", "shelf")');
      const refused = await run(dir, ['import', 'data', 'slots.ndjson', schema, '-d', db.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('  line 2 (slots): /warehouse: is already used by another slot together with shelf (shelf_slot); /shelf: is already used by another slot together with warehouse (shelf_slot)\n');
      expect(await count(db, 'slots')).toBe(0);

      const skipped = await run(dir, ['import', 'data', 'slots.ndjson', schema, '-d', db.url, '--skip-invalid']);
      expect(skipped.stderr).toContain('Skipped 1 rejected row:');
      expect(skipped.code).toBe(0);
      expect(await db.query('select "warehouse", "shelf" from "slots" order by "id"')).toEqual([
        { warehouse: 'north', shelf: 'A1' },
        { warehouse: 'south', shelf: 'A1' },
      ]);
    } finally {
      await db.drop();
    }
  });
});
