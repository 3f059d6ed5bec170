import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { buildApp } from '../src/app/build-app.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Row rules per operation (docs/auth.md#rules) through REST: list filters rows and counts, read is
 * a 404, create and update are checked on the row as stored (and update on the row before),
 * delete on the row; a comparison with an absent value is never true.
 */

const SCHEMA = `
resources:
  posts:
    access: { read: public, write: authenticated }
    rules:
      list: "published = true or authorId = @auth.sub"
      create: "authorId = @auth.sub"
      update: "authorId = @auth.sub"
      delete: "authorId = @auth.sub or 'posts:moderate' in @auth.scopes"
    fields:
      title: { type: string, required: true }
      published: { type: boolean, default: false }
      authorId: { type: string }
      orgId: { type: string }
  notes:
    access: { read: authenticated, write: authenticated }
    rules:
      list: "orgId = @auth.claims.org"
      create: "orgId = @auth.claims.org"
      update: "orgId = @auth.claims.org"
      delete: "orgId = @auth.claims.org"
    fields:
      body: { type: string }
      orgId: { type: string }
      level: { type: integer }
`;

describe('row rules', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let noSub: string;
  let moderator: string;

  beforeAll(async () => {
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), jwt: { secret: RULES_JWT_SECRET } });
    alice = await bearerJwt({ sub: 'alice', org: 'acme' });
    bob = await bearerJwt({ sub: 'bob', org: 'globex' });
    noSub = await bearerJwt({ org: 'acme' });
    moderator = await bearerJwt({ sub: 'mod', scope: 'posts:moderate' });
    const rows = [
      { title: 'a public', published: true, authorId: 'alice' },
      { title: 'a draft', published: false, authorId: 'alice' },
      { title: 'b draft', published: false, authorId: 'bob' },
      { title: 'orphan draft', published: false, authorId: null },
    ];
    for (const row of rows) expect((await t.app.inject({ method: 'POST', url: '/posts', payload: row })).statusCode).toBe(201);
    for (const row of [{ body: 'acme 1', orgId: 'acme' }, { body: 'acme 2', orgId: 'acme' }, { body: 'globex', orgId: 'globex' }]) {
      expect((await t.app.inject({ method: 'POST', url: '/notes', payload: row })).statusCode).toBe(201);
    }
  });
  afterAll(async () => t.close());

  const titles = async (authorization: string, url = '/posts?count=true'): Promise<{ titles: string[]; total: unknown }> => {
    const response = await t.app.inject({ url, headers: { authorization } });
    expect(response.statusCode, response.body).toBe(200);
    const rows = json<{ title?: string; body?: string }[]>(response);
    const total = response.headers['x-total-count'];
    return { titles: rows.map((r) => r.title ?? r.body ?? '').sort(), total: total === undefined ? undefined : Number(total) };
  };

  it('filters lists and counts by the list rule', async () => {
    expect((await titles('')).titles).toEqual(['a public']);
    expect(await titles(alice)).toEqual({ titles: ['a draft', 'a public'], total: 2 });
    expect((await titles(bob)).titles).toEqual(['a public', 'b draft']);
    // No subject: authorId = @auth.sub is never true, not even on the row whose authorId is null.
    expect((await titles(noSub)).titles).toEqual(['a public']);
    expect((await titles(await bearerJwt({ sub: 'x' }), '/posts?filter=published = false')).titles).toEqual([]);
  });

  it('answers a row the read rule hides with 404', async () => {
    expect((await t.app.inject({ url: '/posts/2', headers: { authorization: bob } })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/posts/2', headers: { authorization: alice } })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/posts/4', headers: { authorization: noSub } })).statusCode).toBe(404);
  });

  it('checks creates on the row as stored', async () => {
    const refused = await t.app.inject({ method: 'POST', url: '/posts', headers: { authorization: bob }, payload: { title: 'forged', authorId: 'alice' } });
    expect(refused.statusCode).toBe(403);
    const problem = json<{ code: string; detail: string }>(refused);
    expect(problem.code).toBe('forbidden');
    expect(problem.detail).toContain('authorId = @auth.sub');
    const created = await t.app.inject({ method: 'POST', url: '/posts', headers: { authorization: bob }, payload: { title: 'mine', authorId: 'bob' } });
    expect(created.statusCode).toBe(201);
    // Nothing of the refused create was stored.
    expect((await titles(alice)).titles).not.toContain('forged');
  });

  it('checks updates before and after: no moving a row out of reach, no taking one over', async () => {
    const away = await t.app.inject({ method: 'PATCH', url: '/posts/2', headers: { authorization: alice }, payload: { authorId: 'bob' } });
    expect(away.statusCode).toBe(403);
    const takeover = await t.app.inject({ method: 'PATCH', url: '/posts/1', headers: { authorization: bob }, payload: { authorId: 'bob' } });
    expect(takeover.statusCode).toBe(403);
    const hidden = await t.app.inject({ method: 'PATCH', url: '/posts/2', headers: { authorization: bob }, payload: { title: 'x' } });
    expect(hidden.statusCode).toBe(404);
    const own = await t.app.inject({ method: 'PATCH', url: '/posts/2', headers: { authorization: alice }, payload: { title: 'a draft' } });
    expect(own.statusCode).toBe(200);
    expect(json<{ authorId: string }>(await t.app.inject({ url: '/posts/1' })).authorId).toBe('alice');
  });

  it('checks deletes on the row; scopes in rules', async () => {
    expect((await t.app.inject({ method: 'DELETE', url: '/posts/1', headers: { authorization: bob } })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'DELETE', url: '/posts/3', headers: { authorization: alice } })).statusCode).toBe(404);
    const created = json<{ id: number }>(await t.app.inject({ method: 'POST', url: '/posts', payload: { title: 'doomed', published: true, authorId: 'z' } }));
    expect((await t.app.inject({ method: 'DELETE', url: `/posts/${created.id}`, headers: { authorization: moderator } })).statusCode).toBe(204);
  });

  it('isolates tenants by a claim', async () => {
    expect((await titles(alice, '/notes?count=true'))).toEqual({ titles: ['acme 1', 'acme 2'], total: 2 });
    expect((await titles(bob, '/notes')).titles).toEqual(['globex']);
    expect((await titles(await bearerJwt({ sub: 'c' }), '/notes')).titles).toEqual([]);
    expect((await t.app.inject({ url: '/notes/3', headers: { authorization: alice } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: '/notes', headers: { authorization: alice }, payload: { body: 'x', orgId: 'globex' } })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'PATCH', url: '/notes/1', headers: { authorization: alice }, payload: { orgId: 'globex' } })).statusCode).toBe(403);
    expect((await t.app.inject({ url: '/notes/1' })).statusCode).toBe(200);
  });
});

describe('rules refused at start', () => {
  const cases: [string, RegExp][] = [
    ['list: "nope = 1"', /resources\.posts\.rules\.list.*unknown field "nope" at 0/],
    ['list: "title = "', /<schema>:4:7 at resources\.posts\.rules\.list: in the rule "title = ": the end of the expression at 8/],
    ['list: "title ~ 1"', /resources\.posts\.rules\.list/],
    ['read: "published = @auth.sub and level ~ \'x\'"', /resources\.posts\.rules\.read/],
    ['list: "createdAt = @auth.scopes"', /@auth.scopes/],
    ['list: "title = @auth.nope"', /@auth.nope/],
    ['list: "title = @now"', /@now/],
  ];
  for (const [rule, problem] of cases) {
    it(`refuses ${rule}`, async () => {
      const schema = parseSchemaText(`resources:\n  posts:\n    rules:\n      ${rule}\n    fields:\n      title: { type: string }\n      published: { type: boolean }\n      level: { type: integer }\n`);
      await expect(buildApp({ schema, databaseUrl: 'sqlite::memory:' })).rejects.toThrow(problem);
    });
  }
});

describe('references under rules', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      jwt: { secret: RULES_JWT_SECRET },
      schema: parseSchemaText(`
resources:
  projects:
    access: { read: authenticated, write: authenticated }
    rules: { list: "orgId = @auth.claims.org", create: "orgId = @auth.claims.org" }
    fields:
      name: { type: string }
      orgId: { type: string }
  tasks:
    access: { read: authenticated, write: authenticated }
    rules: { list: "orgId = @auth.claims.org", create: "orgId = @auth.claims.org", update: "orgId = @auth.claims.org" }
    fields:
      title: { type: string }
      orgId: { type: string }
      projectId: { type: integer, references: projects, onDelete: cascade }
`),
    });
    expect((await t.app.inject({ method: 'POST', url: '/projects', payload: { name: 'acme', orgId: 'acme' } })).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'POST', url: '/projects', payload: { name: 'globex', orgId: 'globex' } })).statusCode).toBe(201);
  });
  afterAll(async () => t.close());

  it('treats a row the writer cannot read as absent: no reference into another tenant, no oracle of its ids', async () => {
    const globex = await bearerJwt({ sub: 'g', org: 'globex' });
    const into = await t.app.inject({ method: 'POST', url: '/tasks', headers: { authorization: globex }, payload: { title: 'x', orgId: 'globex', projectId: 1 } });
    const missing = await t.app.inject({ method: 'POST', url: '/tasks', headers: { authorization: globex }, payload: { title: 'x', orgId: 'globex', projectId: 99 } });
    expect(into.statusCode).toBe(422);
    expect(json<{ errors: unknown }>(into).errors).toEqual(json<{ errors: { detail: string }[] }>(missing).errors.map((e) => ({ ...e, detail: e.detail.replace('99', '1') })));
    const own = await t.app.inject({ method: 'POST', url: '/tasks', headers: { authorization: globex }, payload: { title: 'x', orgId: 'globex', projectId: 2 } });
    expect(own.statusCode).toBe(201);
    const moved = await t.app.inject({ method: 'PATCH', url: `/tasks/${json<{ id: number }>(own).id}`, headers: { authorization: globex }, payload: { projectId: 1 } });
    expect(moved.statusCode).toBe(422);
    // Admin reads every row, so it may link across.
    expect((await t.app.inject({ method: 'POST', url: '/tasks', payload: { title: 'y', orgId: 'globex', projectId: 1 } })).statusCode).toBe(201);
  });
});
