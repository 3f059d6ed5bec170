import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * json-server's parameters on a versioned schema (examples/versioned-schema.yaml, `--compat
 * json-server`): each version's names, as restgraph's own parameters take them. v1 calls the field
 * `name` that storage (and v2) calls `fullName`; `nickname` is only in v1, `locale` only in v2. A
 * name the version does not have, but storage does, is refused as restgraph's own parameters refuse
 * it (400 invalid-query); a name no version has keeps json-server's meaning (ignored, or no rows).
 */

checkResponsesAgainstOpenApi();

const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'versioned-schema.yaml');
type Row = Record<string, unknown>;
interface Problem {
  code: string;
  errors?: { parameter?: string; detail: string }[];
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ schema: EXAMPLE, compat: 'json-server' });
  for (const user of [{ name: 'alice', nickname: 'ally' }, { name: 'bob', nickname: 'zzq' }, { name: 'carol', nickname: 'cc' }]) {
    expect((await t.app.inject({ method: 'POST', url: '/v1/users', payload: user })).statusCode).toBe(201);
  }
  expect((await t.app.inject({ method: 'POST', url: '/v2/users', payload: { fullName: 'dave', locale: 'xq-YY' } })).statusCode).toBe(201);
  expect((await t.app.inject({ method: 'POST', url: '/v1/posts', payload: { title: 'first', userId: 1 } })).statusCode).toBe(201);
});
afterAll(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url });
const names = async (url: string, field = 'name'): Promise<unknown[]> => {
  const response = await get(url);
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return json<Row[]>(response).map((row) => row[field]);
};

describe("json-server's parameters in a version's names", () => {
  it('filters: field=v, _like, _ne, _gte, field:op in v1 use v1\'s name of a renamed field', async () => {
    expect(await names('/v1/users?name=alice')).toEqual(['alice']);
    expect(await names('/v1/users?name_like=ali')).toEqual(['alice']);
    expect(await names('/v1/users?name_like=^B')).toEqual(['bob']);
    expect(await names('/v1/users?name_ne=alice')).toEqual(['bob', 'carol', 'dave']);
    expect(await names('/v1/users?name_gte=c')).toEqual(['carol', 'dave']);
    expect(await names('/v1/users?name:contains=aro')).toEqual(['carol']);
    expect(await names('/v1/users?name:in=bob,dave')).toEqual(['bob', 'dave']);
    expect(await names('/v2/users?fullName_like=ali', 'fullName')).toEqual(['alice']);
  });

  it('_sort (0.17 and 1.x) and _where in v1 use v1\'s names', async () => {
    expect(await names('/v1/users?_sort=-name')).toEqual(['dave', 'carol', 'bob', 'alice']);
    expect(await names('/v1/users?_sort=name&_order=desc')).toEqual(['dave', 'carol', 'bob', 'alice']);
    expect(await names('/v1/users?_sort=nickname&_limit=2')).toEqual(['dave', 'alice']);
    expect(await names(`/v1/users?_where=${encodeURIComponent('{"or":[{"name":{"startsWith":"b"}},{"nickname":{"eq":"cc"}}]}')}`)).toEqual(['bob', 'carol']);
    expect(await names(`/v2/users?_where=${encodeURIComponent('{"fullName":{"endsWith":"ve"}}')}`, 'fullName')).toEqual(['dave']);
  });

  it('q searches only the fields the version shows', async () => {
    expect(await names('/v1/users?q=ZZQ')).toEqual(['bob']);
    // nickname is not in v2, locale not in v1.
    expect(await names('/v2/users?q=zzq', 'fullName')).toEqual([]);
    expect(await names('/v1/users?q=xq-')).toEqual([]);
    expect(await names('/v2/users?q=xq-', 'fullName')).toEqual(['dave']);
  });

  it('_embed, _expand and nested routes read through the version', async () => {
    const user = json<Row>(await get('/v1/users/1?_embed=posts'));
    expect(user).toMatchObject({ name: 'alice', posts: [{ title: 'first' }] });
    expect(user).not.toHaveProperty('fullName');
    expect(json<Row[]>(await get('/v1/posts?_expand=author'))).toMatchObject([{ author: { name: 'alice', nickname: 'ally' } }]);
    expect(json<Row[]>(await get('/v1/users/1/posts?title_like=FIR'))).toMatchObject([{ title: 'first' }]);
  });

  it("a name of another version is refused as restgraph's own parameters refuse it: 400 invalid-query naming the parameter", async () => {
    const native = await get('/v2/users?nickname=zzq');
    expect(native.statusCode).toBe(400);
    expect(json<Problem>(native).errors).toEqual([{ parameter: 'nickname', detail: 'is not a known query parameter (nickname is not a field of users in v2)' }]);
    for (const [url, parameter, detail] of [
      ['/v2/users?nickname_like=z', 'nickname_like', 'is not a known query parameter (nickname is not a field of users in v2)'],
      ['/v2/users?nickname:eq=zzq', 'nickname:eq', 'is not a known query parameter (nickname is not a field of users in v2)'],
      ['/v2/users?nickname_ne=zzq', 'nickname_ne', 'is not a known query parameter (nickname is not a field of users in v2)'],
      ['/v1/users?fullName_like=a', 'fullName_like', 'is not a known query parameter (fullName is not a field of users in v1)'],
      ['/v1/users?locale=en', 'locale', 'is not a known query parameter (locale is not a field of users in v1)'],
      ['/v2/users?_sort=nickname', '_sort', '"nickname" is not a field of users in v2'],
      ['/v1/users?_sort=name,-fullName', '_sort', '"fullName" is not a field of users in v1'],
      [`/v2/users?_where=${encodeURIComponent('{"or":[{"nickname":{"eq":"zzq"}}]}')}`, '_where', '"nickname" is not a field of users in v2'],
      [`/v1/users?_where=${encodeURIComponent('{"locale":"en"}')}`, '_where', '"locale" is not a field of users in v1'],
    ] as const) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(json<Problem>(response).code, url).toBe('invalid-query');
      expect(json<Problem>(response).errors, url).toEqual([{ parameter, detail }]);
    }
  });

  it("GET /v1/db and /v2/db answer each version's resources in its names", async () => {
    const v1 = json<Record<string, Row[]>>(await get('/v1/db'));
    expect(Object.keys(v1)).toEqual(['users', 'posts', 'notes']);
    expect(v1.users?.[0]).toMatchObject({ name: 'alice', nickname: 'ally' });
    expect(v1.users?.[0]).not.toHaveProperty('locale');
    const v2 = json<Record<string, Row[]>>(await get('/v2/db'));
    expect(Object.keys(v2)).toEqual(['users', 'posts', 'tags']);
    expect(v2.users?.[3]).toMatchObject({ fullName: 'dave', locale: 'xq-YY' });
    expect(v2.users?.[0]).not.toHaveProperty('nickname');
    expect(json<Row>(await get('/db'))).toEqual(v2);
  });

  it("names no version has keep json-server's meaning: a plain filter is ignored, one with an operator matches nothing", async () => {
    expect(await names('/v1/users?nope=1')).toEqual(['alice', 'bob', 'carol', 'dave']);
    expect(await names('/v1/users?nope_like=1')).toEqual([]);
    expect(await names('/v1/users?_sort=nope,-name')).toEqual(['dave', 'carol', 'bob', 'alice']);
  });
});
