import type { LightMyRequestResponse } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { filterSchema } from './helpers/filter-schema.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { inferSchema } from '../src/schema/infer-schema.js';

checkResponsesAgainstOpenApi();

/**
 * `filter=` expressions through REST, on the suite's database: with sort, keyset paging, count,
 * include, fields, field[op]= parameters and hasMany routes; relation paths and their access rules;
 * Unicode case folding of `~`.
 */

type Row = Record<string, unknown>;
const SECRET = 'a-test-secret-of-at-least-32-bytes!!';

async function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
}

function q(expression: string): string {
  return encodeURIComponent(expression);
}

describe('filter= on REST lists', () => {
  let t: TestApp;
  const get = (url: string, authorization?: string): Promise<LightMyRequestResponse> =>
    t.app.inject({ method: 'GET', url, ...(authorization === undefined ? {} : { headers: { authorization } }) });
  const rows = async (url: string): Promise<Row[]> => {
    const response = await get(url);
    expect(response.statusCode, response.body).toBe(200);
    return json<Row[]>(response);
  };
  const names = async (url: string): Promise<unknown[]> => (await rows(url)).map((r) => r.name ?? r.title ?? r.text);
  const post = async (resource: string, body: Row, authorization?: string): Promise<Row> => {
    const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: body, ...(authorization === undefined ? {} : { headers: { authorization } }) });
    expect(response.statusCode, response.body).toBe(201);
    return json<Row>(response);
  };

  beforeAll(async () => {
    t = await startTestApp({ schema: filterSchema(), jwt: { secret: SECRET } });
    const alice = await post('users', { name: 'Alice', email: 'alice@example.com', age: 31, score: 4.5, active: true, born: '1993-04-01', seen: '2024-05-01T10:00:00Z', role: 'admin' });
    const bob = await post('users', { name: 'Bob', age: 17, active: false, role: 'reader' });
    const elan = await post('users', { name: 'ÉLAN vital', email: 'elan@example.com', age: 45, role: 'editor', born: '1979-12-31' });
    await post('users', { name: '100%_sure' });
    await post('posts', { title: 'SQLite indexes', views: 120, published: true, authorId: alice.id });
    await post('posts', { title: 'Draft on sqlite', views: 3, published: false, authorId: alice.id });
    await post('posts', { title: 'Élan', views: 50, published: true, authorId: elan.id });
    await post('posts', { title: 'Orphan', views: 7, published: true });
    await post('notes', { text: 'bob note', userId: bob.id }, `Bearer ${await token({ sub: 'bob', scope: 'x' })}`);
    await post('notes', { text: 'eve note', userId: alice.id }, `Bearer ${await token({ sub: 'eve', scope: 'x' })}`);
    await post('secrets', { code: 's1', userId: alice.id });
  });
  afterAll(async () => t.close());

  it('compares every type, with or/and/not and precedence', async () => {
    expect(await names(`/users?filter=${q("age >= 18 and role != 'reader'")}&sort=name`)).toEqual(['Alice', 'ÉLAN vital']);
    expect(await names(`/users?filter=${q("role = 'reader' or age > 40 and active is null")}&sort=name`)).toEqual(['Bob', 'ÉLAN vital']);
    expect(await names(`/users?filter=${q("(role = 'reader' or age > 40) and active = false")}`)).toEqual(['Bob']);
    expect(await names(`/users?filter=${q("born < '1990-01-01'")}`)).toEqual(['ÉLAN vital']);
    expect(await names(`/users?filter=${q("seen >= '2024-05-01T11:00:00+02:00'")}`)).toEqual(['Alice']);
    expect(await names(`/users?filter=${q('score > 4 AND active = TRUE')}`)).toEqual(['Alice']);
    expect(await names(`/users?filter=${q("role in ('admin', 'editor')")}&sort=-age`)).toEqual(['ÉLAN vital', 'Alice']);
    expect(await names(`/users?filter=${q('meta is null and email is not null')}&sort=id`)).toEqual(['Alice', 'ÉLAN vital']);
    expect(await names(`/users?filter=${q("name ^= 'Al'")}`)).toEqual(['Alice']);
  });

  it('two-valued logic: a comparison with null is false, != matches null, not e is the rest', async () => {
    const all = await names('/users?sort=id');
    const adults = await names(`/users?filter=${q('age >= 18')}&sort=id`);
    const rest = await names(`/users?filter=${q('not age >= 18')}&sort=id`);
    expect(adults).toEqual(['Alice', 'ÉLAN vital']);
    expect(rest).toEqual(['Bob', '100%_sure']);
    expect([...adults, ...rest].sort()).toEqual([...all].sort());
    expect(await names(`/users?filter=${q("email != 'alice@example.com'")}&sort=id`)).toEqual(['Bob', 'ÉLAN vital', '100%_sure']);
    expect(await names(`/users?filter=${q("email !~ 'example'")}&sort=id`)).toEqual([]);
    expect(await names(`/users?filter=${q("not (email ~ 'alice' or age < 20)")}&sort=id`)).toEqual(['ÉLAN vital', '100%_sure']);
  });

  it('~ is a contains that folds case for all of Unicode, its text matched literally', async () => {
    expect(await names(`/users?filter=${q("name ~ 'élan'")}`)).toEqual(['ÉLAN vital']);
    expect(await names(`/posts?filter=${q("title ~ 'ÉLAN'")}`)).toEqual(['Élan']);
    expect(await names(`/users?filter=${q("name ~ '0%_'")}`)).toEqual(['100%_sure']);
    expect(await names(`/users?filter=${q("name ~ '%'")}`)).toEqual(['100%_sure']);
    expect(await names(`/users?filter=${q("name ~ 'a_i'")}`)).toEqual([]);
  });

  it('relation paths: belongsTo hops, hasMany any/none', async () => {
    expect(await names(`/posts?filter=${q("author.name ~ 'al'")}&sort=title`)).toEqual(['Draft on sqlite', 'SQLite indexes', 'Élan']);
    expect(await names(`/posts?filter=${q("not author.name = 'Alice'")}&sort=title`)).toEqual(['Orphan', 'Élan']);
    expect(await names(`/users?filter=${q("posts.any(title ~ 'sqlite' and published = true)")}`)).toEqual(['Alice']);
    expect(await names(`/users?filter=${q('posts.none(views > 10)')}&sort=id`)).toEqual(['Bob', '100%_sure']);
    expect(await names(`/posts?filter=${q('author.posts.any(views > 100)')}&sort=id`)).toEqual(['SQLite indexes', 'Draft on sqlite']);
  });

  it('ANDs with field[op]=, keeps the filter across keyset pages, counts, includes and projects', async () => {
    const first = await get(`/posts?filter=${q('published = true or views < 5')}&views[gte]=5&sort=-views&limit=1&count=true&include=author&fields=title,authorId`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-total-count']).toBe('3');
    const page1 = json<Row[]>(first);
    expect(page1.map((r) => [r.title, r.authorId, (r.author as Row).name, Object.keys(r)])).toEqual([['SQLite indexes', 1, 'Alice', ['title', 'authorId', 'author']]]);
    const seen = [page1[0]?.title];
    let link = String(first.headers.link);
    while (link !== 'undefined') {
      const url = new URL(/<([^>]+)>/.exec(link)?.[1] ?? '');
      expect(url.searchParams.get('filter')).toBe('published = true or views < 5');
      const next = await get(`${url.pathname}${url.search}`);
      seen.push(...json<Row[]>(next).map((r) => r.title));
      link = String(next.headers.link);
    }
    expect(seen).toEqual(['SQLite indexes', 'Élan', 'Orphan']);
  });

  it('/openapi.json documents filter on lists and hasMany relation routes, with the grammar', async () => {
    const document = json<{ paths: Record<string, { get?: { parameters?: { $ref?: string }[] } }>; components: { parameters: Record<string, { name: string; description: string }> } }>(await get('/openapi.json'));
    const parameter = document.components.parameters['posts.filterExpression'];
    expect(parameter?.name).toBe('filter');
    expect(parameter?.description).toContain('hasMany "." ("any" | "none") "(" expression ")"');
    for (const path of ['/posts', '/users/{id}/posts']) {
      expect(document.paths[path]?.get?.parameters?.map((p) => p.$ref)).toContain('#/components/parameters/posts.filterExpression');
    }
  });

  it('works on hasMany relation routes', async () => {
    expect(await names(`/users/1/posts?filter=${q("title ~ 'SQLITE' and not published = true")}`)).toEqual(['Draft on sqlite']);
  });

  it('access: a path into a resource the principal may not read is refused; owner rules hide related rows', async () => {
    const bob = `Bearer ${await token({ sub: 'bob', scope: 'x' })}`;
    const refused = await get(`/users?filter=${q("secrets.any(code = 's1')")}`, bob);
    expect(refused.statusCode, refused.body).toBe(403);
    const anonymous = await get(`/users?filter=${q("notes.any(text ~ 'note')")}`, '');
    expect(anonymous.statusCode, anonymous.body).toBe(401);
    const seen = await get(`/users?filter=${q("notes.any(text ~ 'note')")}`, bob);
    expect(json<Row[]>(seen).map((r) => r.name)).toEqual(['Bob']);
    const none = await get(`/users?filter=${q("notes.none(text ~ 'note')")}&sort=id`, bob);
    expect(json<Row[]>(none).map((r) => r.name)).toEqual(['Alice', 'ÉLAN vital', '100%_sure']);
    expect(await names(`/users?filter=${q("secrets.any(code = 's1')")}`)).toEqual(['Alice']);
  });

  it('refusals are 400 invalid-query naming the offset and what was expected', async () => {
    const problem = async (expression: string): Promise<{ detail: string; offset?: number }> => {
      const response = await get(`/users?filter=${q(expression)}`);
      expect(response.statusCode, response.body).toBe(400);
      const body = json<{ code: string; errors: { parameter: string; detail: string; offset?: number }[] }>(response);
      expect(body.code).toBe('invalid-query');
      expect(body.errors[0]?.parameter).toBe('filter');
      return body.errors[0] as { detail: string; offset?: number };
    };
    expect(await problem("nmae = 'x'")).toEqual({ parameter: 'filter', offset: 0, detail: 'unknown field "nmae" at 0; fields of users: id, name, email, age, score, active, born, seen, role, meta, createdAt, updatedAt; relations: posts, notes, secrets' });
    expect((await problem("age = 'x'")).detail).toBe('the string "x" at 6 is not a value for age (integer); expected a number');
    expect((await problem("name = 'x")).detail).toBe("unterminated string starting at 7; expected a closing '");
    expect((await problem("name = 'x' and")).detail).toBe('the end of the expression at 14; expected a field name, "not" or "("');
    expect((await problem('active < true')).detail).toContain('operator "<" at 7 does not apply to boolean fields');
  });
});

describe('a field named filter (schemas written before the parameter)', () => {
  it('still loads; filter= is the expression, filter[eq]= and expressions reach the field', async () => {
    const t = await startTestApp({ schema: parseSchemaText('resources:\n  rules:\n    access: { read: public, write: public }\n    fields:\n      filter: { type: string }\n      rank: { type: integer }\n') });
    try {
      for (const payload of [{ filter: 'spam', rank: 1 }, { filter: 'ham', rank: 2 }]) expect((await t.app.inject({ method: 'POST', url: '/rules', payload })).statusCode).toBe(201);
      const ranks = async (url: string): Promise<unknown[]> => json<Row[]>(await t.app.inject({ method: 'GET', url })).map((r) => r.rank);
      expect(await ranks('/rules?filter[eq]=spam')).toEqual([1]);
      expect(await ranks(`/rules?filter=${q("filter = 'ham'")}`)).toEqual([2]);
      expect(await ranks(`/rules?filter=${q('rank >= 1')}&filter[eq]=spam`)).toEqual([1]);
    } finally {
      await t.close();
    }
  });

  it('a json-server file with a "filter" key keeps its name (no rename, the same schema as before)', () => {
    const { definition } = inferSchema({ rules: [{ id: 1, filter: 'spam' }] }, 'db.json');
    expect(Object.keys(definition.resources.rules?.fields ?? {})).toEqual(['filter']);
  });
});
