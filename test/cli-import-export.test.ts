import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, itWithFolder } from './helpers/cli-process.js';
import { fetch, run, serve, writeSchema } from './helpers/cli-serve.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * `restgraph export data` and `restgraph import data` through the CLI, as child processes, on the
 * suite's database (SQLite files, or PostgreSQL schemas): round trips, rejected rows and their
 * line numbers, --skip-invalid, --events, id generators, and the refusal of a database with rows.
 */

const it = itWithFolder('restgraph-import-');

const SCHEMA = `
resources:
  authors:
    access: { read: public, write: public }
    fields:
      name:    { type: string, required: true, minLength: 1 }
      email:   { type: string, format: email, unique: true }
      born:    { type: date }
      active:  { type: boolean, default: true }
      score:   { type: number }
      level:   { type: enum, values: [junior, senior] }
      meta:    { type: json }
      joined:  { type: datetime }
      mentorId: { type: integer, references: authors }
  books:
    access: { read: public, write: public }
    fields:
      title:    { type: string, required: true }
      authorId: { type: integer, required: true, references: authors }
      pages:    { type: integer, min: 1 }
`;

const T = '2026-01-02T03:04:05.678Z';
const line = (resource: string, record: Record<string, unknown>): string => JSON.stringify({ resource, record });

/** Books before their authors, an author naming a mentor further down, ids with gaps. */
const DATA = [
  line('books', { id: 3, title: 'Later', authorId: 5, pages: 10, createdAt: T, updatedAt: T }),
  line('authors', { id: 1, name: 'Ada', email: 'ada@example.com', born: '1815-12-10', active: true, score: 9.5, level: 'senior', meta: { tags: ['math', 1], nested: { a: null } }, joined: T, mentorId: 5, createdAt: T, updatedAt: T }),
  line('authors', { id: 5, name: 'Émile “quoted”', email: null, born: null, active: false, score: null, level: null, meta: [1, 'two'], joined: null, mentorId: null, createdAt: T, updatedAt: '2026-02-01T00:00:00.000Z' }),
  line('books', { id: 7, title: 'First', authorId: 1, pages: null, createdAt: T, updatedAt: T }),
].join('\n');

/** Every table's rows, in id order, hashed (sorted by table name). */
async function checksums(db: TestDatabase): Promise<Record<string, string>> {
  const sums: Record<string, string> = {};
  for (const table of ['authors', 'books']) {
    const rows = await db.query(`select * from "${table}" order by "id"`);
    sums[table] = `${rows.length}:${createHash('sha256').update(JSON.stringify(rows)).digest('hex')}`;
  }
  return sums;
}

async function count(db: TestDatabase, table: string): Promise<number> {
  return Number((await db.query<{ n: number }>(`select count(*) as "n" from "${table}"`))[0]?.n);
}

describe.concurrent('export data and import data', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('round trip: export → import into an empty database gives the same rows, and the next create gets the next id', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    writeFileSync(join(dir.path, 'data.ndjson'), `${DATA}\n`);
    const source = await createTestDatabase(dir.path, 'source');
    const target = await createTestDatabase(dir.path, 'target');
    try {
      const loaded = await run(dir, ['import', 'data', 'data.ndjson', schema, '-d', source.url]);
      expect(loaded.stderr).toBe('');
      expect(loaded.code).toBe(0);
      expect(loaded.stdout).toMatch(/^Imported 4 records \(books 2, authors 2\) into .* rows\/s\)\.\n$/);

      const exported = await run(dir, ['export', 'data', schema, '-d', source.url, '-o', 'export.ndjson']);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toBe('Exported 4 records to export.ndjson.\n');
      const text = readFileSync(join(dir.path, 'export.ndjson'), 'utf8');
      // Authors (referenced) before books, each by id; every field, as the API shows it.
      expect(text.split('\n').map((l) => (l === '' ? '' : `${(JSON.parse(l) as { resource: string }).resource}:${(JSON.parse(l) as { record: { id: number } }).record.id}`))).toEqual([
        'authors:1',
        'authors:5',
        'books:3',
        'books:7',
        '',
      ]);
      expect(JSON.parse(text.split('\n')[0] ?? '')).toEqual({
        resource: 'authors',
        record: { id: 1, name: 'Ada', email: 'ada@example.com', born: '1815-12-10', active: true, score: 9.5, level: 'senior', meta: { tags: ['math', 1], nested: { a: null } }, joined: T, mentorId: 5, createdAt: T, updatedAt: T },
      });

      const imported = await run(dir, ['import', 'data', 'export.ndjson', schema, '-d', target.url]);
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      expect(await checksums(target)).toEqual(await checksums(source));

      // The id generators are past the largest ids: the next create gets the next id.
      const { base } = await serve(dir, [schema], { DATABASE_URL: target.url });
      const created = await fetch(`${base}/authors`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Next' }) });
      expect(created.status).toBe(201);
      expect(((await created.json()) as { id: number }).id).toBe(6);
      const book = await fetch(`${base}/books`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'B', authorId: 6 }) });
      expect(((await book.json()) as { id: number }).id).toBe(8);
    } finally {
      await source.drop();
      await target.drop();
    }
  });

  it('a rejected row fails the whole import, every rejected row listed with its line and reason', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const bad = [
      line('authors', { id: 1, name: 'Ada', email: 'ada@example.com' }),
      line('authors', { id: 2, name: '', email: 'not-an-email', born: '1815-13-45' }),
      line('books', { id: 1, title: 'Lost', authorId: 99 }),
      '{not json',
      line('magazines', { id: 1 }),
      line('authors', { id: 1, name: 'Twice' }),
      line('books', { id: 2, title: 'Fine', authorId: 1, pages: '12' }),
      line('authors', { id: 3, name: 'Bad time', createdAt: 'yesterday' }),
    ].join('\n');
    writeFileSync(join(dir.path, 'bad.ndjson'), bad);
    const db = await createTestDatabase(dir.path);
    try {
      const result = await run(dir, ['import', 'data', 'bad.ndjson', schema, '-d', db.url]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        [
          '  line 2 (authors): /name: must be at least 1 characters long; /email: must be a valid email address; /born: must be a valid date (YYYY-MM-DD)',
          '  line 3 (books): /authorId: authors 99 does not exist (neither in the database nor in the import)',
          '  line 4 (?): is not JSON',
          '  line 5 (magazines): magazines is not a resource of the schema',
          '  line 6 (authors): /id: 1 is already imported from line 1',
          '  line 7 (books): /pages: must be an integer or null',
          '  line 8 (authors): /createdAt: must be a date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z)',
          'restgraph: 7 rows were rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]',
          '',
        ].join('\n'),
      );
      expect(await count(db, 'authors')).toBe(0);
      expect(await count(db, 'books')).toBe(0);

      const skipped = await run(dir, ['import', 'data', 'bad.ndjson', schema, '-d', db.url, '--skip-invalid']);
      expect(skipped.code).toBe(0);
      expect(skipped.stderr).toContain('Skipped 7 rejected rows:\n  line 2 (authors)');
      expect(skipped.stdout).toMatch(/^Imported 1 record \(authors 1\) into /);
      expect(await db.query('select "id", "name" from "authors"')).toEqual([{ id: 1, name: 'Ada' }]);
      expect(await count(db, 'books')).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it('refuses a database with rows, unless --allow-existing-rows (then taken ids are rejected); --events writes created events', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    writeFileSync(join(dir.path, 'data.ndjson'), DATA);
    writeFileSync(join(dir.path, 'more.ndjson'), [line('authors', { id: 1, name: 'Taken' }), line('authors', { id: 9, name: 'New', mentorId: 5 })].join('\n'));
    const db = await createTestDatabase(dir.path);
    try {
      expect((await run(dir, ['import', 'data', 'data.ndjson', schema, '-d', db.url, '--events'])).code).toBe(0);
      const events = await db.query<{ type: string; recordId: number }>('select "type", "recordId" from "_restgraph_events" order by "id"');
      expect(events.map((e) => `${e.type}:${e.recordId}`).sort()).toEqual(['author.created:1', 'author.created:5', 'book.created:3', 'book.created:7']);

      const refused = await run(dir, ['import', 'data', 'more.ndjson', schema, '-d', db.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        'restgraph: The database already has rows in authors, books: import data fills an empty database (--allow-existing-rows imports beside them, rejecting rows whose ids are taken). [RG_DATABASE_NOT_EMPTY]\n',
      );

      const skipped = await run(dir, ['import', 'data', 'more.ndjson', schema, '-d', db.url, '--allow-existing-rows', '--skip-invalid']);
      expect(skipped.code).toBe(0);
      expect(skipped.stderr).toBe('Skipped 1 rejected row:\n  line 1 (authors): /id: 1 already exists in authors\n');
      expect(await db.query('select "id", "name", "mentorId" from "authors" order by "id"')).toEqual([
        { id: 1, name: 'Ada', mentorId: 5 },
        { id: 5, name: 'Émile “quoted”', mentorId: null },
        { id: 9, name: 'New', mentorId: 5 },
      ]);
      expect(await count(db, '_restgraph_events')).toBe(4);
    } finally {
      await db.drop();
    }
  });

  it('import <resource> <file.csv>: values converted by field type, ids kept or assigned, rejected rows with their lines', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    const csv = [
      'name,email,born,active,score,level,meta,joined,mentorId,id',
      'Ada,ada@example.com,1815-12-10,yes,9.5,senior,"{""tags"":[""math""]}",2026-01-02T03:04:05Z,,4',
      '"Grace, H.",,,0,-1e3,,"[1,2]",,4,',
      '"Multi',
      'line",,,,,,,,,',
      'Bad,not-an-email,1815-13-01,maybe,abc,boss,,soon,x,',
      'Short,row',
      'Meta,,,,,,{nope,,,',
    ].join('\n');
    writeFileSync(join(dir.path, 'authors.csv'), `${csv}\n`);
    const db = await createTestDatabase(dir.path);
    try {
      const refused = await run(dir, ['import', 'authors', 'authors.csv', schema, '-d', db.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        [
          '  line 6 (authors): /email: must be a valid email address; /born: must be a valid date (YYYY-MM-DD); /active: must be a boolean or null; /score: must be a number or null; /level: must be one of: "junior", "senior", null; /joined: must be a valid date-time (RFC 3339, e.g. 2024-05-01T12:00:00Z); /mentorId: must be an integer or null',
          '  line 7 (authors): has 2 cells; the header has 10',
          '  line 8 (authors): /meta: is not JSON',
          'restgraph: 3 rows were rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]',
          '',
        ].join('\n'),
      );
      expect(await count(db, 'authors')).toBe(0);

      const skipped = await run(dir, ['import', 'authors', 'authors.csv', schema, '-d', db.url, '--skip-invalid']);
      expect(skipped.code).toBe(0);
      expect(skipped.stdout).toMatch(/^Imported 3 records \(authors 3\) into /);
      const exported = await run(dir, ['export', 'data', schema, '-d', db.url]);
      const records = exported.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { record: Record<string, unknown> }).record);
      // The row with an id keeps it; the others are numbered after it, in file order. (After ids
      // past it: on PostgreSQL the refused import above spent ids, as a failed create does.)
      const firstAssigned = records[1]?.id as number;
      expect(firstAssigned).toBeGreaterThan(4);
      expect(records.map((r) => ({ ...r, createdAt: typeof r.createdAt, updatedAt: typeof r.updatedAt }))).toEqual([
        { id: 4, name: 'Ada', email: 'ada@example.com', born: '1815-12-10', active: true, score: 9.5, level: 'senior', meta: { tags: ['math'] }, joined: '2026-01-02T03:04:05.000Z', mentorId: null, createdAt: 'string', updatedAt: 'string' },
        { id: firstAssigned, name: 'Grace, H.', email: null, born: null, active: false, score: -1000, level: null, meta: [1, 2], joined: null, mentorId: 4, createdAt: 'string', updatedAt: 'string' },
        { id: firstAssigned + 1, name: 'Multi\nline', email: null, born: null, active: true, score: null, level: null, meta: null, joined: null, mentorId: null, createdAt: 'string', updatedAt: 'string' },
      ]);
    } finally {
      await db.drop();
    }
  });

  it('import <resource> <file.json|file.ndjson>: a JSON array or NDJSON, each rejected record with the line it starts on; references checked against the database', async ({ folder: dir }) => {
    const schema = writeSchema(dir, SCHEMA);
    writeFileSync(join(dir.path, 'authors.json'), '[\n  {"name": "Ada"},\n  {\n    "id": 10,\n    "name": "Grace"\n  }, {"name": 5}\n]\n');
    const db = await createTestDatabase(dir.path);
    try {
      const authors = await run(dir, ['import', 'authors', 'authors.json', schema, '-d', db.url]);
      expect(authors.stderr).toBe('  line 6 (authors): /name: must be a string\nrestgraph: 1 row was rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]\n');
      expect((await run(dir, ['import', 'authors', 'authors.json', schema, '-d', db.url, '--skip-invalid', '--events'])).code).toBe(0);
      // Ada, without an id, is numbered after Grace's 10 (further on PostgreSQL, where the refused
      // import above spent ids, as a failed create does).
      const [grace, ada] = await db.query<{ id: number; name: string }>('select "id", "name" from "authors" order by "id"');
      expect(grace).toEqual({ id: 10, name: 'Grace' });
      expect(ada?.name).toBe('Ada');
      const adaId = ada?.id ?? 0;
      expect(adaId).toBeGreaterThan(10);
      writeFileSync(join(dir.path, 'books.ndjson'), `{"title": "One", "authorId": 10}\n\n{"title": "Two", "authorId": ${adaId}}\n{"id": 3, "title": "Three", "authorId": 1}\n{"title": "Four", "authorId": 10, "pages": 0}\n`);
      const books = await run(dir, ['import', 'books', 'books.ndjson', schema, '-d', db.url]);
      expect(books.stderr).toBe(
        '  line 4 (books): /authorId: authors 1 does not exist (neither in the database nor in the import)\n  line 5 (books): /pages: must be at least 1\n' +
          'restgraph: 2 rows were rejected, so nothing was imported (--skip-invalid imports the others). [RG_IMPORT_REJECTED]\n',
      );
      expect(await count(db, 'books')).toBe(0);
      expect((await run(dir, ['import', 'books', 'books.ndjson', schema, '-d', db.url, '--skip-invalid', '--events'])).code).toBe(0);
      // The rows without ids are numbered after the largest id written (3, taken out again at the
      // end when its reference was found nowhere: its id is spent, as a deleted row's is).
      const books2 = await db.query<{ id: number; title: string; authorId: number }>('select "id", "title", "authorId" from "books" order by "id"');
      const one = books2[0]?.id ?? 0;
      expect(one).toBeGreaterThan(3);
      expect(books2).toEqual([
        { id: one, title: 'One', authorId: 10 },
        { id: one + 1, title: 'Two', authorId: adaId },
      ]);
      // --events: one created event per row imported, with ids given or assigned; none for the row taken out again.
      const events = await db.query<{ type: string; recordId: number; data: string }>('select "type", "recordId", "data" from "_restgraph_events" order by "id"');
      expect(events.map((e) => `${e.type}:${e.recordId}`)).toEqual(['author.created:10', `author.created:${adaId}`, `book.created:${one}`, `book.created:${one + 1}`]);
      expect((JSON.parse(events[3]?.data ?? '') as { object: unknown }).object).toMatchObject({ id: one + 1, title: 'Two', authorId: adaId, pages: null });
    } finally {
      await db.drop();
    }
  });
});
