import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { resourceNamed } from '../src/schema/schema-model.js';
import type { FilterCondition, TextSearch } from '../src/store/list-spec.js';
import { openDatabase } from '../src/store/open-database.js';
import { RecordStore } from '../src/store/record-store.js';
import type { SqlExecutor, SqlStatement } from '../src/store/sql-database.js';
import { graphql } from './helpers/graphql-request.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { TEST_DIALECT } from './helpers/test-database.js';

/**
 * Full-text search (`?search=`, GraphQL `search:`) over fields marked searchable, on the suite's
 * database: words ANDed, the last a prefix, "phrases", relevance order, filters, counts, owners,
 * hostile input, writes seen at once, and the index used by the plan.
 */

const SCHEMA = `
resources:
  notes:
    owner: author
    access: { read: authenticated, write: authenticated }
    fields:
      title:  { type: string, searchable: true }
      body:   { type: string, searchable: true }
      author: { type: string }
      stars:  { type: integer }
    relations:
      board: { belongsTo: boards, foreignKey: boardId }
  boards:
    fields:
      name: { type: string }
    relations:
      notes: { hasMany: notes, foreignKey: boardId }
`;

// boardId is declared by the relation's field: add it.
const FULL_SCHEMA = SCHEMA.replace("      stars:  { type: integer }\n", "      stars:  { type: integer }\n      boardId: { type: integer, references: boards }\n");

interface Note {
  id: number;
  title: string | null;
  body: string | null;
  stars: number | null;
}

let t: TestApp;
let userKey: string;

async function create(resource: string, body: Record<string, unknown>): Promise<Note> {
  const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body });
  expect(response.statusCode, response.body).toBe(201);
  return json<Note>(response);
}

async function search(query: string, headers: Record<string, string> = {}): Promise<{ status: number; ids: number[]; body: unknown; headers: Record<string, unknown> }> {
  const response = await t.app.inject({ method: 'GET', url: `/notes?${query}`, headers });
  const body: unknown = json(response);
  return { status: response.statusCode, ids: Array.isArray(body) ? (body as Note[]).map((n) => n.id) : [], body, headers: response.headers };
}

const q = (text: string): string => `search=${encodeURIComponent(text)}`;

const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(FULL_SCHEMA) });
  const board = await create('boards', { name: 'main' });
  const rows: [string, string, string, number][] = [
    ['sqlite', 'SQLite index', 'How the SQLite query planner picks an index.', 5],
    ['postgres', 'PostgreSQL indexes', 'GIN and B-tree indexes in PostgreSQL.', 4],
    ['fts', 'Full text search', 'Search with SQLite FTS5 and an index of words; sqlite sqlite sqlite.', 3],
    ['cafe', 'Café culture', 'ÉLAN and crème brûlée in Paris.', 2],
    ['phrase', 'Words in order', 'the quick brown fox jumps over the lazy dog', 1],
    ['reversed', 'Words reversed', 'the brown quick fox', 1],
    ['other', 'Owned by someone else', 'sqlite index secret', 9],
  ];
  for (const [name, title, body, stars] of rows) {
    const note = await create('notes', { title, body, stars, author: name === 'other' ? 'u2' : 'u1', boardId: board.id });
    ids[name] = note.id;
  }
  const key = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'u1', scopes: ['notes:read'], subject: 'u1' } });
  expect(key.statusCode, key.body).toBe(201);
  userKey = (json<{ key: string }>(key)).key;
});

afterAll(async () => {
  await t.close();
});

describe('?search=', () => {
  it('ANDs the words, in any field, ignoring case', async () => {
    const found = await search(q('SQLITE planner'));
    expect(found.status).toBe(200);
    expect(found.ids).toEqual([ids.sqlite]);
  });

  it('matches the last word as a prefix, and only the last', async () => {
    expect((await search(q('postgre'))).ids).toEqual([ids.postgres]);
    expect((await search(q('postgre indexes'))).ids).toEqual([]);
    expect((await search(q('brow'))).ids.sort()).toEqual([ids.phrase, ids.reversed].sort());
  });

  it('matches "a phrase" only with its words in order', async () => {
    expect((await search(q('"quick brown"'))).ids).toEqual([ids.phrase]);
    expect((await search(q('"brown quick"'))).ids).toEqual([ids.reversed]);
    expect((await search(q('fox "quick brown"'))).ids).toEqual([ids.phrase]);
  });

  it('orders by relevance (most relevant first, ties by id) unless sort is given', async () => {
    const relevant = await search(q('sqlite') + '&author=u1');
    expect(relevant.ids[0]).toBe(ids.fts); // "sqlite" four times
    expect(relevant.ids.sort()).toEqual([ids.sqlite, ids.fts].sort());
    const sorted = await search(q('sqlite') + '&sort=-stars');
    expect(sorted.ids).toEqual([ids.other, ids.sqlite, ids.fts]);
  });

  it('combines with filters, count, fields, limit and include, and pages by offset', async () => {
    const found = await search(`${q('index')}&stars[gte]=4&count=true&fields=id,title&include=board`);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.headers['x-total-count']).toBe('3');
    const rows = found.body as Record<string, unknown>[];
    expect(rows.map((r) => r.id).sort()).toEqual([ids.sqlite, ids.postgres, ids.other].sort());
    expect(Object.keys(rows[0] ?? {})).toEqual(['id', 'title', 'board']);
    const first = await search(`${q('index')}&limit=2`);
    expect(first.ids).toHaveLength(2);
    const link = String(first.headers.link);
    expect(link).toMatch(/offset=2/);
    const next = await t.app.inject({ method: 'GET', url: new URL(link.slice(1, link.indexOf('>'))).pathname + new URL(link.slice(1, link.indexOf('>'))).search });
    const rest = json<Note[]>(next).map((n) => n.id);
    expect([...first.ids, ...rest].sort()).toEqual((await search(q('index'))).ids.sort());
    expect(new Set([...first.ids, ...rest]).size).toBe(first.ids.length + rest.length);
  });

  it('pages with cursors when sorted, and refuses a cursor in relevance order', async () => {
    const page = await search(`${q('index')}&sort=stars&limit=1`);
    expect(String(page.headers.link)).toMatch(/after=/);
    const refused = await search(`${q('index')}&after=abc`);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/offset/);
  });

  it('folds case and diacritics on SQLite (PostgreSQL folds case only)', async () => {
    expect((await search(q('élan'))).ids).toEqual([ids.cafe]);
    expect((await search(q('CAFÉ'))).ids).toEqual([ids.cafe]);
    expect((await search(q('cafe'))).ids).toEqual(TEST_DIALECT === 'sqlite' ? [ids.cafe] : []);
  });

  it('finds only the rows an owner-filtered principal may read', async () => {
    const mine = await search(q('secret'), { authorization: `Bearer ${userKey}` });
    expect(mine.status).toBe(200);
    expect(mine.ids).toEqual([]);
    const all = await search(`${q('sqlite index')}&count=true`, { authorization: `Bearer ${userKey}` });
    expect(all.ids.sort()).toEqual([ids.sqlite, ids.fts].sort());
    expect(all.headers['x-total-count']).toBe('2');
  });

  it('searches through a hasMany relation route', async () => {
    const board = (json<{ id: number }[]>(await t.app.inject({ method: 'GET', url: '/boards' })))[0];
    const response = await t.app.inject({ method: 'GET', url: `/boards/${board?.id ?? 0}/notes?${q('quick')}` });
    expect(response.statusCode, response.body).toBe(200);
    expect(json<Note[]>(response).map((n) => n.id).sort()).toEqual([ids.phrase, ids.reversed].sort());
  });

  it('sees creates, updates and deletes at once', async () => {
    const note = await create('notes', { title: 'Zebra crossing', body: 'stripes', author: 'u1' });
    expect((await search(q('zebra'))).ids).toEqual([note.id]);
    const patched = await t.app.inject({ method: 'PATCH', url: `/notes/${note.id}`, payload: { title: 'Giraffe' } });
    expect(patched.statusCode).toBe(200);
    expect((await search(q('zebra'))).ids).toEqual([]);
    expect((await search(q('giraffe stripes'))).ids).toEqual([note.id]);
    const replaced = await t.app.inject({ method: 'PUT', url: `/notes/${note.id}`, payload: { title: 'Okapi', author: 'u1' } });
    expect(replaced.statusCode).toBe(200);
    expect((await search(q('stripes'))).ids).toEqual([]);
    expect((await search(q('okapi'))).ids).toEqual([note.id]);
    expect((await t.app.inject({ method: 'DELETE', url: `/notes/${note.id}` })).statusCode).toBe(204);
    expect((await search(q('okapi'))).ids).toEqual([]);
  });

  it('treats every search syntax in the text as plain words: results or a 400, never a 5xx', async () => {
    const hostile = [
      'NEAR(sqlite index)', 'sqlite*', '*', '-sqlite', 'sqlite -index', 'title:sqlite', '{title body}:sqlite', 'sqlite AND OR NOT index',
      '^sqlite', 'sqlite + index', '"', '"unclosed phrase', '""', "'", "it's", '\\', 'a & b | !c', 'sqlite <-> index', 'sqlite:*', '(((', ')',
      'x'.repeat(1000), 'ünïcödé 漢字 العربية 🙂', '\u0301\u0301', 'sqlite\u0000', ' ', '', '%', '_', '$1', ';drop table notes;--',
      Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), 'x'.repeat(10_000), 'sqlite '.repeat(1500),
    ];
    for (const text of hostile) {
      const found = await search(q(text));
      // 414: the URL itself is too long (over 8 KiB), before any parameter is read.
      expect([200, 400, 414], `${text.slice(0, 40)} → ${found.status} ${JSON.stringify(found.body).slice(0, 200)}`).toContain(found.status);
      if (found.status === 400) expect((found.body as { code: string }).code).toBe('invalid-query');
    }
    // As syntax, these would find the SQLite note; as words, "near" and "title" are in no note.
    expect((await search(q('NEAR(sqlite planner)'))).ids).toEqual([]);
    expect((await search(q('title:sqlite planner'))).ids).toEqual([]);
    expect((await search(q('sqlite* planner'))).ids).toEqual([ids.sqlite]);
    expect((await search(q('sqlite AND planner'))).ids).toEqual([]); // "and" is a word to find
  });

  it('refuses an empty search, an over-long one and too many words with reasons', async () => {
    for (const [text, reason] of [['', /empty/], ['   ', /empty/], ['*** ---', /no words/], ['x'.repeat(1001), /at most 1000/], [Array.from({ length: 33 }, () => 'w').join(' '), /at most 32/]] as const) {
      const found = await search(q(text));
      expect(found.status).toBe(400);
      expect(JSON.stringify(found.body)).toMatch(reason);
    }
  });

  it('on a resource without searchable fields, names the fields that could be', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/boards?search=main' });
    expect(response.statusCode).toBe(400);
    const problem = json<{ code: string; detail: string }>(response);
    expect(problem.code).toBe('invalid-query');
    expect(problem.detail).toMatch(/boards has no searchable fields; string fields that could be made searchable.*: name/);
  });
});

describe('with --compat json-server', () => {
  it('takes search beside json-server\'s parameters', async () => {
    const compat = await startTestApp({ schema: parseSchemaText(FULL_SCHEMA), compat: 'json-server' });
    try {
      for (const title of ['Alpha sqlite', 'Beta sqlite', 'Gamma postgres']) {
        expect((await compat.app.inject({ method: 'POST', url: '/notes', payload: { title, author: 'u1' } })).statusCode).toBe(201);
      }
      const response = await compat.app.inject({ method: 'GET', url: '/notes?search=sqlite&_sort=title&_order=desc' });
      expect(response.statusCode, response.body).toBe(200);
      expect(json<Note[]>(response).map((n) => n.title)).toEqual(['Beta sqlite', 'Alpha sqlite']);
    } finally {
      await compat.close();
    }
  });
});

describe('GraphQL search:', () => {
  it('searches lists and connections, with relevance order and counts', async () => {
    const result = await graphql(t.app, '{ notes(search: "sqlite", filter: { author: { eq: "u1" } }) { id } notesConnection(search: "quick") { totalCount edges { node { id } } } }');
    expect(result.body.errors).toBeUndefined();
    const data = result.body.data as { notes: { id: string }[]; notesConnection: { totalCount: number; edges: { node: { id: string } }[] } };
    expect(data.notes.map((n) => Number(n.id))).toEqual([ids.fts, ids.sqlite]);
    expect(data.notesConnection.totalCount).toBe(2);
  });

  it('refuses a 10,000-character search with a reason', async () => {
    const refused = await graphql(t.app, 'query ($s: String) { notes(search: $s) { id } }', { variables: { s: 'x'.repeat(10_000) } });
    expect(refused.body.errors?.[0]?.message).toMatch(/at most 1000/);
    expect(refused.body.errors?.[0]?.extensions.code).toBe('invalid-query');
  });

  it('refuses a search on a resource without searchable fields and cursors in relevance order', async () => {
    const refused = await graphql(t.app, '{ notesConnection(search: "sqlite", after: "abc") { totalCount } }');
    expect(refused.body.errors?.[0]?.message).toMatch(/relevance/);
    const schema = await graphql(t.app, '{ __type(name: "Query") { fields { name args { name } } } }');
    const fields = (schema.body.data as { __type: { fields: { name: string; args: { name: string }[] }[] } }).__type.fields;
    expect(fields.find((f) => f.name === 'notes')?.args.map((a) => a.name)).toContain('search');
    expect(fields.find((f) => f.name === 'boards')?.args.map((a) => a.name)).not.toContain('search');
  });
});

describe('/openapi.json', () => {
  it('documents search on the lists of resources with searchable fields only', async () => {
    const doc = json<{ components: { parameters: Record<string, { name: string; description: string }> }; paths: Record<string, { get?: { parameters?: { $ref?: string }[] } }> }>(
      await t.app.inject({ method: 'GET', url: '/openapi.json' }),
    );
    expect(doc.components.parameters['notes.search']?.description).toMatch(/Full-text search in title, body/);
    expect(doc.components.parameters['boards.search']).toBeUndefined();
    const refs = (path: string): string[] => (doc.paths[path]?.get?.parameters ?? []).map((p) => p.$ref ?? '');
    expect(refs('/notes')).toContain('#/components/parameters/notes.search');
    expect(refs('/boards/{id}/notes')).toContain('#/components/parameters/notes.search');
    expect(refs('/boards')).not.toContain('#/components/parameters/boards.search');
  });
});

describe('the plan', () => {
  it('of a search, with an owner filter, in order of relevance and counted, uses the full-text index and the primary key', async () => {
    const { db, rules } = await openDatabase(t.db.url);
    try {
      const full = parseSchemaText(FULL_SCHEMA);
      const notes = resourceNamed(full, 'notes');
      const search: TextSearch = { terms: [{ words: ['sqlite'], prefix: false }, { words: ['ind'], prefix: true }] };
      const filters: FilterCondition[] = [{ field: 'id', op: 'search', value: search }, { field: 'author', op: 'eq', value: 'u1' }];
      // The statements the store compiles, captured, then explained on the database.
      const statements: SqlStatement[] = [];
      const capture: SqlExecutor = {
        all: (statement) => (statements.push(statement), Promise.resolve([])),
        one: () => undefined,
        run: () => Promise.resolve(0),
      };
      const store = new RecordStore(db, rules, (name) => resourceNamed(full, name));
      await store.list(notes, { filters, sort: [{ field: 'id', direction: 'asc' }], limit: 10, relevance: search }, capture);
      await store.count(notes, filters, capture);
      expect(statements).toHaveLength(2);
      for (const statement of statements) {
        const plan = await db.transaction(async (tx) => {
          // PostgreSQL would scan a table this small whatever its indexes: ask what it does when it must not.
          if (TEST_DIALECT === 'postgres') await tx.run({ sql: 'set local enable_seqscan = off', parameters: [] });
          return tx.all({ sql: `${TEST_DIALECT === 'sqlite' ? 'explain query plan' : 'explain'} ${statement.sql}`, parameters: statement.parameters });
        });
        const text = plan.map((row) => Object.values(row).join(' ')).join('\n');
        if (TEST_DIALECT === 'sqlite') {
          expect(text).toMatch(/rg_fts_notes VIRTUAL TABLE INDEX/);
          expect(text).not.toMatch(/SCAN notes\b/);
        } else {
          expect(text).toMatch(/Bitmap Index Scan on rg_fts_notes/);
          expect(text).not.toMatch(/Seq Scan/);
        }
      }
    } finally {
      await db.close();
    }
  });
});
