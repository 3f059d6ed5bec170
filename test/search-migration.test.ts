import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { SchemaError } from '../src/errors.js';
import { BulkImport, type ImportItem } from '../src/core/bulk-import.js';
import { fieldNameFor } from '../src/schema/inferred-names.js';
import { resourceNamed } from '../src/schema/schema-model.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { copyDatabase } from '../src/store/database-copy.js';
import { openDatabase } from '../src/store/open-database.js';
import { actAsAdmin, captureLogs, json, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createDatabaseOf, createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * `searchable` as a schema change: adding it indexes the rows there are, removing it drops the
 * index, renames and drops keep the index right, a copy into another database keeps it filled;
 * what the schema refuses.
 */

const PLAIN = `
resources:
  notes:
    fields:
      title: { type: string }
      body:  { type: string }
`;
const SEARCHABLE = PLAIN.replace('title: { type: string }', 'title: { type: string, searchable: true }').replace('body:  { type: string }', 'body:  { type: string, searchable: true }');

let dir: ReturnType<typeof tempDir>;
let database: TestDatabase;
let running: FastifyInstance[] = [];
let logs: Record<string, unknown>[] = [];

beforeEach(async () => {
  dir = tempDir('restgraph-search-migrate-');
  database = await createTestDatabase(dir.path, 'app');
  running = [];
});

afterEach(async () => {
  for (const app of running) await app.close();
  await database.drop();
  dir.cleanup();
});

async function boot(schema: string, options: { allowDestructiveMigrations?: boolean } = {}): Promise<FastifyInstance> {
  const file = join(dir.path, 'schema.yaml');
  writeFileSync(file, schema);
  const captured = captureLogs();
  logs = captured.logs;
  const app = actAsAdmin(await buildApp({ schema: file, databaseUrl: database.url, logDestination: captured.logDestination, adminToken: TEST_ADMIN_TOKEN, ...options }));
  running.push(app);
  return app;
}

async function stop(app: FastifyInstance): Promise<void> {
  running = running.filter((a) => a !== app);
  await app.close();
}

async function found(app: FastifyInstance, text: string, resource = 'notes'): Promise<{ status: number; titles: unknown[] }> {
  const response = await app.inject({ method: 'GET', url: `/${resource}?search=${encodeURIComponent(text)}` });
  const body = json<Record<string, unknown>[] | Record<string, unknown>>(response);
  return { status: response.statusCode, titles: Array.isArray(body) ? body.map((r) => r.title ?? r.heading) : [] };
}

/** The full-text index's traces: SQLite's FTS5 table, PostgreSQL's tsvector column and GIN index. */
async function indexTraces(db = database): Promise<string[]> {
  if (db.dialect === 'sqlite') return (await db.tables()).filter((name) => name.startsWith('rg_fts_notes'));
  return [...(await db.indexes('notes')).filter((name) => name.startsWith('rg_fts')), ...(await db.columns('notes')).filter((name) => name === '_rg_search')];
}

describe('adding and removing searchable', () => {
  it('indexes the rows a table already has, and drops the index when removed', async () => {
    let app = await boot(PLAIN);
    for (const [title, body] of [['Alpha', 'first note'], ['Beta', 'second note'], ['Gamma', null]]) {
      expect((await app.inject({ method: 'POST', url: '/notes', payload: { title, body } })).statusCode).toBe(201);
    }
    expect((await found(app, 'note')).status).toBe(400);
    await stop(app);

    app = await boot(SEARCHABLE);
    expect(logs.some((line) => String(line.msg).includes('schema change applied: build the full-text index of notes (title, body) from its rows'))).toBe(true);
    expect((await found(app, 'note')).titles.sort()).toEqual(['Alpha', 'Beta']);
    expect((await found(app, 'gamma')).titles).toEqual(['Gamma']);
    expect(await indexTraces()).not.toEqual([]);
    await stop(app);

    app = await boot(PLAIN);
    expect(logs.some((line) => String(line.msg).includes('schema change applied: drop the full-text index of notes (title, body)'))).toBe(true);
    expect((await found(app, 'note')).status).toBe(400);
    expect(await indexTraces()).toEqual([]);
    // Writes go on without the index.
    expect((await app.inject({ method: 'POST', url: '/notes', payload: { title: 'Delta' } })).statusCode).toBe(201);
    await stop(app);
  });

  it('follows a searchable field renamed, a searchable field dropped and the resource dropped', async () => {
    let app = await boot(SEARCHABLE);
    expect((await app.inject({ method: 'POST', url: '/notes', payload: { title: 'Alpha', body: 'first note' } })).statusCode).toBe(201);
    await stop(app);

    app = await boot(SEARCHABLE.replace('title: { type: string, searchable: true }', 'heading: { type: string, searchable: true, renamedFrom: title }'));
    expect((await found(app, 'alpha')).titles).toEqual(['Alpha']);
    expect((await app.inject({ method: 'POST', url: '/notes', payload: { heading: 'Omega', body: 'last note' } })).statusCode).toBe(201);
    expect((await found(app, 'omega')).titles).toEqual(['Omega']);
    await stop(app);

    app = await boot(PLAIN.replace('title: { type: string }\n', ''), { allowDestructiveMigrations: true });
    expect((await found(app, 'note')).status).toBe(400);
    expect((await app.inject({ method: 'PATCH', url: '/notes/1', payload: { body: 'changed' } })).statusCode).toBe(200);
    await stop(app);

    app = await boot('resources:\n  others:\n    fields:\n      name: { type: string }\n', { allowDestructiveMigrations: true });
    await stop(app);
    expect((await database.tables()).filter((name) => name.includes('notes'))).toEqual([]);
  });
});

describe('restgraph import', () => {
  it('indexes the rows it imports, in its transaction', async () => {
    const app = await boot(SEARCHABLE);
    await stop(app);
    const schema = parseSchemaText(SEARCHABLE);
    const notes = resourceNamed(schema, 'notes');
    const { db } = await openDatabase(database.url);
    try {
      const items: ImportItem[] = [
        { line: 1, resource: notes, record: { title: 'Imported', body: 'from a file' } },
        { line: 2, resource: notes, record: { title: 'Second', body: 'imported too' } },
      ];
      await new BulkImport(db, schema).run(Readable.from(items) as AsyncIterable<ImportItem>, { mode: 'create' });
    } finally {
      await db.close();
    }
    const again = await boot(SEARCHABLE);
    expect((await found(again, 'imported')).titles.sort()).toEqual(['Imported', 'Second']);
    expect((await found(again, 'file')).titles).toEqual(['Imported']);
  });
});

describe('restgraph copy', () => {
  it('fills the target index from the copied rows', async () => {
    const app = await boot(SEARCHABLE);
    expect((await app.inject({ method: 'POST', url: '/notes', payload: { title: 'Alpha', body: 'copied note' } })).statusCode).toBe(201);
    await stop(app);
    const other = TEST_DIALECT === 'sqlite' ? 'sqlite' : 'postgres';
    const target = await createDatabaseOf(other === 'sqlite' ? 'postgres' : 'sqlite', dir.path, 'target').catch(() => createDatabaseOf(other, dir.path, 'target'));
    try {
      const source = await openDatabase(database.url);
      const into = await openDatabase(target.url);
      try {
        await copyDatabase({ db: source.db, description: 'source' }, { db: into.db, description: 'target' });
      } finally {
        await source.db.close();
        await into.db.close();
      }
      const copied = actAsAdmin(await buildApp({ schema: join(dir.path, 'schema.yaml'), databaseUrl: target.url, logDestination: captureLogs().logDestination, adminToken: TEST_ADMIN_TOKEN }));
      try {
        expect((await found(copied, 'copied')).titles).toEqual(['Alpha']);
      } finally {
        await copied.close();
      }
    } finally {
      await target.drop();
    }
  });
});

describe('the schema', () => {
  it('refuses searchable on a field that is not a string, naming it', () => {
    expect(() => parseSchemaText('resources:\n  notes:\n    fields:\n      n: { type: integer, searchable: true }\n')).toThrow(SchemaError);
    try {
      parseSchemaText('resources:\n  notes:\n    fields:\n      n: { type: integer, searchable: true }\n');
    } catch (error) {
      expect((error as Error).message).toMatch(/searchable.*applies to string fields, not integer/);
    }
  });

  it('keeps a field named search (filtered by ?search=), unless the resource has searchable fields', async () => {
    const app = await boot('resources:\n  tags:\n    fields:\n      search: { type: string }\n');
    expect((await app.inject({ method: 'POST', url: '/tags', payload: { search: 'blue' } })).statusCode).toBe(201);
    expect((await app.inject({ method: 'POST', url: '/tags', payload: { search: 'red' } })).statusCode).toBe(201);
    const response = await app.inject({ method: 'GET', url: '/tags?search=red' });
    expect(response.statusCode).toBe(200);
    expect(json<{ search: string }[]>(response).map((r) => r.search)).toEqual(['red']);
    expect(() => parseSchemaText('resources:\n  tags:\n    fields:\n      search: { type: string }\n      name: { type: string, searchable: true }\n')).toThrow(/cannot have a field named "search"/);
  });

  it('keeps a db.json key named search as the field search (the schema its database was migrated to stays the same)', () => {
    expect(fieldNameFor('search', new Set())).toEqual({ name: 'search' });
    expect(fieldNameFor('sort', new Set())).toEqual({ name: 'sortValue', renamed: '"sort" is a query parameter of lists' });
  });
});
