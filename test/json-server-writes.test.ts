import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOG_SCHEMA } from './helpers/blog-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';

/**
 * What a json-server front end writes, with `--compat json-server`, on the suite's database
 * (SQLite, or PostgreSQL in its pass): a create with an id of the client's choosing, and `GET /db`.
 */

checkResponsesAgainstOpenApi();


type Row = Record<string, unknown>;
interface Problem {
  code: string;
  errors?: { pointer?: string; detail: string }[];
}

const dir = tempDir('restgraph-json-server-writes-');
const schemaFile = join(dir.path, 'blog.yaml');
writeFileSync(schemaFile, BLOG_SCHEMA);
afterAll(() => {
  dir.cleanup();
});

describe('a create with the id the client chose (--compat json-server)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ schema: schemaFile, compat: 'json-server' });
  });
  afterAll(() => t.close());
  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload: payload as object, headers });

  it('makes the record of a free id (201, Location), refuses a taken one (409), and later creates go on past it', async () => {
    const chosen = await post('/posts', { id: 42, title: 'chosen' });
    expect(chosen.statusCode).toBe(201);
    expect(chosen.headers.location).toBe('/posts/42');
    expect(json<Row>(chosen)).toMatchObject({ id: 42, title: 'chosen', views: null });
    expect(json<Row>(await t.app.inject({ method: 'GET', url: '/posts/42' }))).toMatchObject({ id: 42, title: 'chosen' });

    const taken = await post('/posts', { id: 42, title: 'again' });
    expect(taken.statusCode).toBe(409);
    expect(json<Problem>(taken)).toMatchObject({ code: 'unique-conflict', errors: [{ pointer: '/id', detail: 'is already used by another post' }] });

    // The id generator is past 42: the next create the server numbers is 43, not 1.
    expect(json<Row>(await post('/posts', { title: 'numbered' })).id).toBe(43);
    // A free id below the generator is taken as it is, and moves nothing back.
    expect(json<Row>(await post('/posts', { id: 7, title: 'seven' })).id).toBe(7);
    expect(json<Row>(await post('/posts', { title: 'next' })).id).toBe(44);
    // null is no choice: the server numbers the record.
    expect(json<Row>(await post('/posts', { id: null, title: 'null id' })).id).toBe(45);
  });

  it('takes a chosen id on the nested route and with an Idempotency-Key too', async () => {
    const nested = await post('/posts/42/comments', { id: 500, text: 'nested' });
    expect(nested.statusCode).toBe(201);
    expect(json<Row>(nested)).toMatchObject({ id: 500, postId: 42 });
    const first = await post('/comments', { id: 600, text: 'once', postId: 42 }, { 'idempotency-key': 'chosen-600' });
    const replay = await post('/comments', { id: 600, text: 'once', postId: 42 }, { 'idempotency-key': 'chosen-600' });
    expect([first.statusCode, replay.statusCode]).toEqual([201, 201]);
    expect(replay.body).toBe(first.body);
    expect(json<Row>(await post('/comments', { text: 'numbered', postId: 42 })).id).toBe(601);
  });

  it('refuses an id that is not a positive integer within range (422 naming /id), creating nothing', async () => {
    for (const id of [0, -1, 1.5, '42', true, { n: 1 }, 2 ** 52 + 1, 1e300]) {
      const response = await post('/posts', { id, title: 'bad id' });
      expect(response.statusCode, JSON.stringify(id)).toBe(422);
      expect(json<Problem>(response), JSON.stringify(id)).toMatchObject({ code: 'validation-failed', errors: [{ pointer: '/id', detail: 'must be a positive integer of at most 4503599627370496 (2^52)' }] });
    }
    expect(json<Row>(await post('/posts', { id: 2 ** 52, title: 'largest' })).id).toBe(2 ** 52);
    const listed = json<Row[]>(await t.app.inject({ method: 'GET', url: '/posts?title=bad%20id' }));
    expect(listed).toEqual([]);
  });

  it('keeps concurrent creates apart: a numbered one never meets a chosen id; a chosen id a numbered one took first is a 409', async () => {
    const fresh = await startTestApp({ schema: schemaFile, compat: 'json-server' });
    try {
      // Chosen ids among those the generator hands out at the same time (as a front end that
      // numbers rows itself, max(id) + 1, would choose them).
      const chosen = (i: number): boolean => i % 3 === 0;
      const responses = await Promise.all(
        Array.from({ length: 60 }, (_, i) => fresh.app.inject({ method: 'POST', url: '/posts', payload: chosen(i) ? { id: i + 1, title: `chosen ${i + 1}` } : { title: `numbered ${i}` } })),
      );
      const made = responses.filter((r) => r.statusCode === 201).map((r) => json<Row>(r));
      expect(responses.filter((r, i) => !chosen(i) && r.statusCode !== 201).map((r) => r.body)).toEqual([]);
      expect(new Set(made.map((r) => r.id)).size).toBe(made.length);
      const rows = json<Row[]>(await fresh.app.inject({ method: 'GET', url: '/posts?limit=1000' }));
      expect(rows.length).toBe(made.length);
      for (const [i, response] of responses.entries()) {
        if (!chosen(i) || response.statusCode === 201) continue;
        expect(json<Problem>(response).code).toBe('unique-conflict');
        expect(rows.find((r) => r.id === i + 1)?.title).toMatch(/^numbered /);
      }
      const next = json<Row>(await fresh.app.inject({ method: 'POST', url: '/posts', payload: { title: 'after' } })).id as number;
      expect(next).toBeGreaterThan(Math.max(...made.map((r) => r.id as number)));
    } finally {
      await fresh.close();
    }
  });

  it('without --compat json-server, an id in a create is refused as before (the server assigns ids)', async () => {
    const native = await startTestApp({ schema: schemaFile });
    try {
      const response = await native.app.inject({ method: 'POST', url: '/posts', payload: { id: 42, title: 'x' } });
      expect(response.statusCode).toBe(422);
      expect(json<Problem>(response).errors).toEqual([{ pointer: '/id', detail: 'is assigned by the server; leave it out' }]);
    } finally {
      await native.close();
    }
  });
});

/** The blog, with a singleton, a resource behind a scope and one behind an owner rule. */
const DB_SCHEMA = `${BLOG_SCHEMA}  profile:
    singleton: true
    access: { read: public, write: public }
    fields:
      name: { type: string }
  secrets:
    access: { read: [secrets:read], write: [secrets:read] }
    fields:
      text: { type: string }
  diaries:
    access: { read: authenticated, write: authenticated }
    owner: author
    fields:
      author: { type: string }
      text: { type: string }
`;

describe('GET /db (--compat json-server): the whole data set, as the caller may list it', () => {
  const dbSchema = join(dir.path, 'db-schema.yaml');
  writeFileSync(dbSchema, DB_SCHEMA);
  let t: TestApp;
  let ann = '';
  beforeAll(async () => {
    t = await startTestApp({ schema: dbSchema, compat: 'json-server', listLimits: { defaultLimit: 5, maxLimit: 5, maxInValues: 100 } });
    const token = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'ann', scopes: ['secrets:read'], subject: 'ann' } });
    ann = json<{ key: string }>(token).key;
    const bob = json<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'bob', scopes: ['other'], subject: 'bob' } })).key;
    for (const [url, payload, key] of [
      ['/posts', { title: 'one' }, undefined],
      ['/posts', { title: 'two' }, undefined],
      ['/comments', { text: 'first', postId: 1 }, undefined],
      ['/secrets', { text: 'hidden' }, undefined],
      ['/diaries', { text: "ann's" }, ann],
      ['/diaries', { text: "bob's" }, bob],
    ] as const) {
      const response = await t.app.inject({ method: 'POST', url, payload, ...(key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } }) });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(201);
    }
  });
  afterAll(() => t.close());

  const db = async (authorization: string): Promise<Record<string, unknown>> => {
    const response = await t.app.inject({ method: 'GET', url: '/db', headers: { authorization } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    return json<Record<string, unknown>>(response);
  };
  const texts = (rows: unknown): unknown[] => (rows as Row[]).map((r) => r.text ?? r.title);

  it('answers every resource the caller may list, by name, each as its list reads it (rows by id; a singleton as its object; a singleton never written left out)', async () => {
    const anonymous = await db('');
    expect(Object.keys(anonymous)).toEqual(['posts', 'comments']);
    expect(anonymous.posts).toMatchObject([{ id: 1, title: 'one', createdAt: expect.any(String) as string }, { id: 2, title: 'two' }]);
    expect(anonymous.comments).toMatchObject([{ id: 1, text: 'first', postId: 1 }]);
    expect((await t.app.inject({ method: 'PUT', url: '/profile', payload: { name: 'typicode' } })).statusCode).toBe(200);
    expect((await db('')).profile).toMatchObject({ id: 1, name: 'typicode' });
  });

  it('leaves out a resource the caller may not list, and keeps to the owner rule', async () => {
    const asAnn = await db(`Bearer ${ann}`);
    expect(Object.keys(asAnn)).toEqual(['posts', 'comments', 'profile', 'secrets', 'diaries']);
    expect(texts(asAnn.secrets)).toEqual(['hidden']);
    expect(texts(asAnn.diaries)).toEqual(["ann's"]);
    const asAdmin = await db(`Bearer ${TEST_ADMIN_TOKEN}`);
    expect(texts(asAdmin.diaries)).toEqual(["ann's", "bob's"]);
  });

  it('is refused, naming the collections, when one holds more rows than the largest page (400 data-set-too-large); a collection of a whole page is answered', async () => {
    for (const title of ['three', 'four', 'five']) await t.app.inject({ method: 'POST', url: '/posts', payload: { title } });
    expect(texts((await db('')).posts)).toEqual(['one', 'two', 'three', 'four', 'five']);
    await t.app.inject({ method: 'POST', url: '/posts', payload: { title: 'six' } });
    const refused = await t.app.inject({ method: 'GET', url: '/db', headers: { authorization: '' } });
    expect(refused.statusCode).toBe(400);
    expect(json<Problem & { detail: string }>(refused)).toMatchObject({
      code: 'data-set-too-large',
      detail: 'GET /db answers the whole data set or nothing, and posts has more than 5 rows (the largest page, RESTGRAPH_MAX_PAGE_SIZE). Read posts page by page (GET /posts?_page=1&_limit=5), or export the database (restgraph export data).',
    });
    await t.app.inject({ method: 'DELETE', url: '/posts/6' });
    expect((await t.app.inject({ method: 'GET', url: '/db', headers: { authorization: '' } })).statusCode).toBe(200);
  });

  it('is not served without --compat json-server', async () => {
    const native = await startTestApp({ schema: dbSchema });
    try {
      expect((await native.app.inject({ method: 'GET', url: '/db' })).statusCode).toBe(404);
    } finally {
      await native.close();
    }
  });
});
