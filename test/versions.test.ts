import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { SchemaError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { actAsAdmin, checkResponsesAgainstOpenApi, discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase } from './helpers/test-database.js';

checkResponsesAgainstOpenApi();

/**
 * API versions (examples/versioned-schema.yaml): /v1 and /v2 serve the shapes the schema
 * declares (a renamed field, a removed one, an added one, resources only in one version), over
 * the same rows; v1 is deprecated, and says so in Deprecation, Sunset and Link.
 */

const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'versioned-schema.yaml');
type Row = Record<string, unknown>;
interface Problem {
  code: string;
  errors?: { pointer?: string; parameter?: string; detail: string }[];
}

describe('versions: /v1 and /v2 over the same rows', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ schema: EXAMPLE });
  });
  afterAll(() => t.close());

  const req = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('each version shows and takes its own field names; unversioned paths are the latest (v2)', async () => {
    const v1 = await req('POST', '/v1/users', { name: 'Ann', nickname: 'annie', phone: '555' });
    expect(v1.statusCode).toBe(201);
    const created = json<Row>(v1);
    expect(Object.keys(created)).toEqual(['id', 'name', 'email', 'nickname', 'phone', 'createdAt', 'updatedAt']);
    expect(v1.headers.location).toBe(`/v1/users/${String(created.id)}`);

    const v2 = json<Row>(await req('GET', `/v2/users/${String(created.id)}`));
    expect(Object.keys(v2)).toEqual(['id', 'fullName', 'email', 'locale', 'phone', 'createdAt', 'updatedAt']);
    // The same row: renamed field, the default of the field v1 does not have.
    expect(v2).toMatchObject({ fullName: 'Ann', locale: 'en', phone: '555' });
    expect(json<Row>(await req('GET', `/users/${String(created.id)}`))).toEqual(v2);

    const made = await req('POST', '/users', { fullName: 'Bo', locale: 'fr' });
    expect(made.statusCode).toBe(201);
    expect(json<Row>(await req('GET', `/v1/users/${String(json<Row>(made).id)}`))).toMatchObject({ name: 'Bo', nickname: null });
  });

  it("refuses a version's names in the other version, naming them", async () => {
    const v1 = await req('POST', '/v1/users', { fullName: 'X', locale: 'de' });
    expect(v1.statusCode).toBe(422);
    // The body's other problems come in the same answer, in the version's names.
    expect(json<Problem>(v1).errors).toEqual([
      { pointer: '/fullName', detail: 'is not a field of users in v1' },
      { pointer: '/locale', detail: 'is not a field of users in v1' },
      { pointer: '/name', detail: 'is required' },
    ]);
    const v2 = await req('POST', '/v2/users', { name: 'X', nickname: 'x' });
    expect(v2.statusCode).toBe(422);
    expect(json<Problem>(v2).errors?.map((e) => e.pointer)).toEqual(['/nickname', '/fullName', '/name']);
    const kept = json<Row>(await req('POST', '/v1/users', { name: 'Keep', nickname: 'k' }));
    const patched = await req('PATCH', `/v1/users/${String(kept.id)}`, { locale: 'de', name: 42, nickname: 'changed' });
    expect(patched.statusCode).toBe(422);
    expect(json<Problem>(patched).errors).toEqual([
      { pointer: '/locale', detail: 'is not a field of users in v1' },
      { pointer: '/name', detail: 'must be a string' },
    ]);
    const put = await req('PUT', `/v1/users/${String(kept.id)}`, { locale: 'de' });
    expect(json<Problem>(put).errors?.map((e) => e.pointer)).toEqual(['/locale', '/name']);
    expect(json<Row>(await req('GET', `/v1/users/${String(kept.id)}`))).toMatchObject({ name: 'Keep', nickname: 'k' });
    // Validation errors point at the version's name of a renamed field.
    const bad = await req('POST', '/v1/users', { name: 42 });
    expect(json<Problem>(bad).errors).toEqual([{ pointer: '/name', detail: 'must be a string' }]);
    const users = json<Row[]>(await req('GET', '/v2/users?fields=fullName'));
    expect(users.map((u) => u.fullName)).not.toContain('X');
  });

  it('list queries use the version names: filters, sort, fields; the other names are a 400', async () => {
    await req('POST', '/v1/users', { name: 'Zed', nickname: 'z' });
    const v1 = await req('GET', '/v1/users?sort=-name&fields=id,name,nickname&name[startsWith]=Z');
    expect(v1.statusCode).toBe(200);
    expect(json<Row[]>(v1)).toEqual([{ id: expect.any(Number) as number, name: 'Zed', nickname: 'z' }]);
    const v2 = await req('GET', '/v2/users?sort=-fullName&fields=fullName,locale&fullName=Zed');
    expect(json<Row[]>(v2)).toEqual([{ fullName: 'Zed', locale: 'en' }]);

    for (const [url, parameter] of [
      ['/v1/users?fullName=Zed', 'fullName'],
      ['/v1/users?locale[eq]=en', 'locale[eq]'],
      ['/v1/users?sort=fullName', 'sort'],
      ['/v1/users?fields=id,locale', 'fields'],
      ['/v2/users?nickname=z', undefined],
      ['/v2/users?sort=name', 'sort'],
    ] as const) {
      const response = await req('GET', url);
      expect(response.statusCode, url).toBe(400);
      if (parameter !== undefined) expect(json<Problem>(response).errors?.map((e) => e.parameter), url).toContain(parameter);
    }
  });

  it('paging in v1 follows its own cursor, with rel="next" beside the successor link', async () => {
    for (const name of ['P1', 'P2', 'P3']) await req('POST', '/v1/users', { name });
    const first = await req('GET', '/v1/users?sort=name&limit=2&name[startsWith]=P');
    expect(json<Row[]>(first).map((u) => u.name)).toEqual(['P1', 'P2']);
    const link = String(first.headers.link);
    expect(link).toContain('rel="successor-version"');
    const next = /<([^>]+)>; rel="next"/.exec(link)?.[1];
    expect(next).toBeDefined();
    const second = await req('GET', new URL(next ?? '').pathname + new URL(next ?? '').search);
    expect(json<Row[]>(second).map((u) => u.name)).toEqual(['P3']);
  });

  it('a replace through one version keeps the fields only the other version has', async () => {
    const id = String(json<Row>(await req('POST', '/v1/users', { name: 'Kim', nickname: 'kimmy' })).id);
    await req('PATCH', `/v2/users/${id}`, { locale: 'ko' });
    const v2put = await req('PUT', `/v2/users/${id}`, { fullName: 'Kim Lee', locale: 'ko' });
    expect(v2put.statusCode).toBe(200);
    expect(json<Row>(await req('GET', `/v1/users/${id}`))).toMatchObject({ name: 'Kim Lee', nickname: 'kimmy' });
    const v1put = await req('PUT', `/v1/users/${id}`, { name: 'Kim Park', nickname: 'kp' });
    expect(v1put.statusCode).toBe(200);
    expect(json<Row>(await req('GET', `/v2/users/${id}`))).toMatchObject({ fullName: 'Kim Park', locale: 'ko' });
  });

  it('ETags are per representation: If-Match takes the version’s own tag', async () => {
    const id = String(json<Row>(await req('POST', '/v2/users', { fullName: 'Eve' })).id);
    const v1 = await req('GET', `/v1/users/${id}`);
    const v2 = await req('GET', `/v2/users/${id}`);
    expect(v1.headers.etag).not.toBe(v2.headers.etag);
    expect((await req('GET', `/v1/users/${id}`, undefined, { 'if-none-match': String(v1.headers.etag) })).statusCode).toBe(304);
    expect((await req('PATCH', `/v1/users/${id}`, { nickname: 'e' }, { 'if-match': String(v2.headers.etag) })).statusCode).toBe(412);
    expect((await req('PATCH', `/v1/users/${id}`, { nickname: 'e' }, { 'if-match': String(v1.headers.etag) })).statusCode).toBe(200);
  });

  it('resources exist only in their versions', async () => {
    expect((await req('POST', '/v2/tags', { label: 'news' })).statusCode).toBe(201);
    expect((await req('GET', '/tags')).statusCode).toBe(200);
    expect((await req('GET', '/v1/tags')).statusCode).toBe(404);
    expect((await req('POST', '/v1/notes', { text: 'old' })).statusCode).toBe(201);
    expect((await req('GET', '/v2/notes')).statusCode).toBe(404);
    expect((await req('GET', '/notes')).statusCode).toBe(404);
  });

  it('embedded and related rows come in the version of the request', async () => {
    const id = String(json<Row>(await req('POST', '/v1/users', { name: 'Rae' })).id);
    const post = json<Row>(await req('POST', '/v1/posts', { title: 'hello', userId: Number(id) }));
    const v1 = json<Row>(await req('GET', `/v1/posts/${String(post.id)}?include=author`));
    expect(v1.author).toMatchObject({ name: 'Rae' });
    expect(v1.author).not.toHaveProperty('fullName');
    const v2 = json<Row>(await req('GET', `/v2/posts/${String(post.id)}/author`));
    expect(v2).toMatchObject({ fullName: 'Rae', locale: 'en' });
    const v1author = json<Row>(await req('GET', `/v1/posts/${String(post.id)}/author`));
    expect(v1author).toMatchObject({ name: 'Rae' });
  });

  it('a deprecated version says so on every response: Deprecation, Sunset, Link to its successor', async () => {
    const list = await req('GET', '/v1/users');
    expect(list.headers.deprecation).toBe(`@${Date.parse('2026-06-30T00:00:00Z') / 1000}`);
    expect(list.headers.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    expect(list.headers.link).toBe('</v2/users>; rel="successor-version"');
    const missing = await req('GET', '/v1/users/999999');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers.deprecation).toBeDefined();
    expect(missing.headers.link).toBe('</v2/users/999999>; rel="successor-version"');
    // A resource the next version no longer has links to that version's description.
    expect((await req('GET', '/v1/notes')).headers.link).toBe('</v2/openapi.json>; rel="successor-version"');
    for (const url of ['/v2/users', '/users']) {
      const current = await req('GET', url);
      expect(current.headers.deprecation).toBeUndefined();
      expect(current.headers.sunset).toBeUndefined();
    }
  });

  it('GraphQL serves the latest version, with its deprecations', async () => {
    const response = await req('POST', '/graphql', {
      query: '{ user: __type(name: "User") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } tag: __type(name: "Tag") { name } note: __type(name: "Note") { name } }',
    });
    const data = json<{ data: { user: { fields: { name: string; isDeprecated: boolean; deprecationReason: string | null }[] }; tag: unknown; note: unknown } }>(response).data;
    const fields = new Map(data.user.fields.map((f) => [f.name, f]));
    expect([...fields.keys()]).toEqual(expect.arrayContaining(['fullName', 'locale', 'phone']));
    expect(fields.has('name')).toBe(false);
    expect(fields.has('nickname')).toBe(false);
    expect(fields.get('phone')).toMatchObject({ isDeprecated: true, deprecationReason: 'Use email; phone numbers are no longer used for contact.' });
    expect(fields.get('fullName')?.isDeprecated).toBe(false);
    expect(data.tag).toEqual({ name: 'Tag' });
    expect(data.note).toBeNull();
  });
});

describe('versions: renaming a field keeps its data', () => {
  it('a database made before the rename is migrated by renaming the column', async () => {
    const dir = tempDir();
    const db = await createTestDatabase(dir.path);
    try {
      const before = parseSchemaText(readFileSync(EXAMPLE, 'utf8').replace('fullName: { type: string, required: true, maxLength: 200, renamedFrom: name, renamedIn: v2 }', 'name: { type: string, required: true, maxLength: 200 }'));
      const first = actAsAdmin(await buildApp({ schema: before, databaseUrl: db.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN }));
      expect((await first.inject({ method: 'POST', url: '/v2/users', payload: { name: 'Old' } })).statusCode).toBe(201);
      await first.close();
      const second = actAsAdmin(await buildApp({ schema: EXAMPLE, databaseUrl: db.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN }));
      try {
        expect(json<Row[]>(await second.inject({ method: 'GET', url: '/v2/users' }))).toMatchObject([{ fullName: 'Old' }]);
        expect(json<Row[]>(await second.inject({ method: 'GET', url: '/v1/users' }))).toMatchObject([{ name: 'Old' }]);
        expect(await db.columns('users')).toContain('fullName');
        expect(await db.columns('users')).not.toContain('name');
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
      dir.cleanup();
    }
  });
});

describe('versions: schema errors', () => {
  const base = (extra: string, versions = 'versions: [v1, v2]') => `${versions}\nresources:\n  users:\n    fields:\n${extra}\n`;
  const cases: [string, string, string][] = [
    [base('      name: { type: string, addedIn: v3 }'), 'resources.users.fields.name.addedIn', '"v3" is not one of the versions (v1, v2)'],
    [base('      name: { type: string, addedIn: v2, removedIn: v2 }'), 'resources.users.fields.name.removedIn', 'must be a later version than addedIn'],
    [base('      name: { type: string, removedIn: v2, deprecatedIn: v2 }'), 'resources.users.fields.name.deprecatedIn', 'must be a version in which it exists'],
    [base('      name: { type: string, required: true, addedIn: v2 }'), 'resources.users.fields.name.required', 'cannot be required without a default'],
    [base('      name: { type: string, renamedIn: v2 }'), 'resources.users.fields.name', 'renamedIn needs renamedFrom'],
    [base('      name: { type: string, renamedFrom: title, renamedIn: v1 }'), 'resources.users.fields.name.renamedIn', 'cannot be the first version'],
    [base('      name: { type: string, renamedFrom: email, renamedIn: v2 }\n      email: { type: string }'), 'resources.users.fields.name.renamedFrom', 'an old name must be free'],
    [base('      name: { type: string }', 'versions: [v1, { name: v2, deprecated: 2026-01-01 }]'), 'versions[1].deprecated', 'the latest version cannot be deprecated'],
    [base('      name: { type: string }', 'versions: [{ name: v1, sunset: 2027-01-01 }, v2]'), 'versions[0].sunset', 'must say when it was deprecated'],
    [base('      name: { type: string }', 'versions: [{ name: v1, deprecated: soon }, v2]'), 'versions[0].deprecated', 'is not a date'],
    [base('      name: { type: string }', 'versions: [v1, v1]'), 'versions[1]', 'is listed twice'],
  ];
  for (const [text, path, message] of cases) {
    it(`${path}: ${message}`, () => {
      let caught: unknown;
      try {
        parseSchemaText(text, 'api.yaml');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SchemaError);
      expect((caught as Error).message).toContain(path);
      expect((caught as Error).message).toContain(message);
    });
  }
});
