import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessSummary } from '../src/core/access-policy.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * GET /v1/auth/me tells a credential what the access rules let it do (the admin console offers
 * only those actions): what it says must be what the server then does, for every resource and
 * operation, for admins, scoped keys, owners and anonymous callers.
 */

let t: TestApp;
const keys: Record<string, string> = {};
const KINDS: Record<string, { scopes: string[]; subject?: string }> = {
  reader: { scopes: ['users:read'] },
  writer: { scopes: ['users:write', 'posts:write', 'orders:read'], subject: '1' },
  everything: { scopes: ['admin'] },
};
const anonymous = { authorization: '' };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  t = await startTestApp();
  for (const [name, spec] of Object.entries(KINDS)) {
    keys[name] = json<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { name, ...spec } })).key;
  }
});
afterAll(() => t.close());

async function me(headers: Record<string, string>): Promise<AccessSummary> {
  const res = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers });
  expect(res.statusCode).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return json<AccessSummary>(res);
}

describe('GET /v1/auth/me', () => {
  it('describes each credential: kind, subject, scopes, admin, and what it may manage', async () => {
    expect(await me(bearer(keys.writer as string))).toMatchObject({ kind: 'api-key', subject: '1', scopes: ['orders:read', 'posts:write', 'users:write'], admin: false, manage: { tokens: false, webhooks: false } });
    expect(await me(bearer(keys.everything as string))).toMatchObject({ kind: 'api-key', admin: true, manage: { tokens: true, webhooks: true } });
    expect(await me(anonymous)).toMatchObject({ kind: 'anonymous', subject: null, scopes: [], admin: false });
    // The test app's own requests carry the admin token.
    expect(await me({})).toMatchObject({ kind: 'admin-token', admin: true });
    const reader = await me(bearer(keys.reader as string));
    expect(reader.resources.users).toEqual({ read: true, create: false, update: false, delete: false, owner: null });
    expect(reader.resources.posts).toEqual({ read: true, create: false, update: false, delete: false, owner: 'userId' });
    expect(reader.resources.orders).toMatchObject({ read: false, owner: 'userId' });
  });

  it('an invalid token is refused as on every path', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: bearer('rg_not-a-real-key') });
    expect(res.statusCode).toBe(401);
    expect(json<{ code: string }>(res).code).toBe('invalid-token');
  });

  it('says exactly what the server then allows: every resource and operation, for every kind of credential', async () => {
    const credentials = { anonymous, reader: bearer(keys.reader as string), writer: bearer(keys.writer as string), admin: bearer(keys.everything as string) };
    let checked = 0;
    for (const [who, headers] of Object.entries(credentials)) {
      const summary = await me(headers);
      for (const [resource, may] of Object.entries(summary.resources)) {
        // Each request is refused by the access rule (401/403) or gets past it (to a 200, a 404
        // for an id that does not exist, or a 422 for an empty body).
        const attempts = {
          read: { method: 'GET', url: `/${resource}?limit=1` },
          create: { method: 'POST', url: `/${resource}`, payload: {} },
          update: { method: 'PATCH', url: `/${resource}/987654`, payload: {} },
          delete: { method: 'DELETE', url: `/${resource}/987654` },
        } as const;
        for (const [operation, request] of Object.entries(attempts)) {
          const res = await t.app.inject({ ...request, headers });
          const refused = res.statusCode === 401 || res.statusCode === 403;
          expect({ who, resource, operation, status: res.statusCode, refused }).toEqual({ who, resource, operation, status: res.statusCode, refused: !may[operation as keyof typeof attempts] });
          checked++;
        }
      }
    }
    expect(checked).toBe(4 * 4 * 4);
  });
});

describe('the service index', () => {
  it('names the restgraph version and the database to admins only', async () => {
    const forAdmin = json<{ server?: { version: string; database: string } }>(await t.app.inject({ method: 'GET', url: '/' }));
    expect(forAdmin.server?.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(['SQLite', 'PostgreSQL']).toContain(forAdmin.server?.database);
    expect(json<object>(await t.app.inject({ method: 'GET', url: '/', headers: bearer(keys.reader as string) }))).not.toHaveProperty('server');
    expect(json<object>(await t.app.inject({ method: 'GET', url: '/', headers: anonymous }))).not.toHaveProperty('server');
  });
});

describe('the OpenAPI document, for generated forms', () => {
  it("marks each record schema with its resource, each field with restgraph's type, and references with their target and onDelete", async () => {
    const doc = json<{ components: { schemas: Record<string, { 'x-restgraph-resource'?: string; properties: Record<string, Record<string, unknown>> }> } }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const post = doc.components.schemas.Post;
    expect(post?.['x-restgraph-resource']).toBe('posts');
    expect(post?.properties.userId).toMatchObject({ 'x-restgraph-type': 'integer', 'x-restgraph-references': 'users', 'x-restgraph-on-delete': 'cascade' });
    expect(post?.properties.publishedAt).toMatchObject({ 'x-restgraph-type': 'datetime' });
    expect(post?.properties.tags).toMatchObject({ 'x-restgraph-type': 'json' });
    expect(doc.components.schemas.Order?.properties.productId).toMatchObject({ 'x-restgraph-references': 'products', 'x-restgraph-on-delete': 'restrict' });
    expect(doc.components.schemas.Product?.properties.currency).toMatchObject({ 'x-restgraph-type': 'enum' });
  });

  it('marks each relation include may embed with the field that links the two (x-restgraph-foreign-key)', async () => {
    const doc = json<{ components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> } }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const { User, Post, Product } = doc.components.schemas;
    expect(User?.properties.posts).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Post' }, 'x-restgraph-foreign-key': 'userId' });
    expect(User?.properties.orders).toMatchObject({ 'x-restgraph-foreign-key': 'userId' });
    expect(Product?.properties.orders).toMatchObject({ 'x-restgraph-foreign-key': 'productId' });
    expect(Post?.properties.user).toMatchObject({ 'x-restgraph-foreign-key': 'userId' });
  });
});
