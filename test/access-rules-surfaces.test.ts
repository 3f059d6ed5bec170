import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessSummary } from '../src/core/access-policy.js';
import type { TokenView } from '../src/core/token-operations.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every answer here must conform to the OpenAPI document the app serves (tokens with claims, auth/me with rules).
checkResponsesAgainstOpenApi();

/**
 * The surfaces of access rules (docs/auth.md#rules) around credentials: API keys carry claims
 * (POST /v1/tokens, listed, cached with the key, read by rules as @auth.claims.<name>), GET
 * /v1/auth/me says per operation and restricted field what the rules allow, and /openapi.json
 * states each operation's rule and each restricted field's access. On the suite's database.
 */

const SCHEMA = `
resources:
  users:
    access: { read: authenticated, write: [users:admin] }
    fields:
      name: { type: string }
      email: { type: string, read: "id = @auth.sub", write: [users:admin] }
      note: { type: string, read: [users:admin] }
  posts:
    access: { read: public, write: authenticated }
    rules:
      list: "published = true or authorId = @auth.sub"
      create: "authorId = @auth.sub"
      update: "authorId = @auth.sub"
      delete: "'posts:moderate' in @auth.scopes"
    fields:
      title: { type: string, required: true }
      published: { type: boolean, default: false }
      authorId: { type: string }
  notes:
    access: { read: authenticated, write: authenticated }
    rules:
      list: "orgId = @auth.claims.org"
      create: "orgId = @auth.claims.org"
      update: "orgId = @auth.claims.org"
      delete: "orgId = @auth.claims.org and @auth.claims.plan = 'pro'"
    fields:
      body: { type: string }
      orgId: { type: string }
`;

let t: TestApp;
const bearer = (key: string): { authorization: string } => ({ authorization: `Bearer ${key}` });

async function createKey(body: Record<string, unknown>): Promise<{ key: string; token: TokenView & { key: string } }> {
  const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: body });
  expect(response.statusCode, response.body).toBe(201);
  const token = json<TokenView & { key: string }>(response);
  return { key: token.key, token };
}

async function me(key?: string): Promise<AccessSummary> {
  const response = await t.app.inject({ url: '/v1/auth/me', headers: key === undefined ? { authorization: '' } : bearer(key) });
  expect(response.statusCode, response.body).toBe(200);
  return json<AccessSummary>(response);
}

beforeAll(async () => {
  t = await startTestApp({ schema: parseSchemaText(SCHEMA) });
  for (const row of [{ body: 'acme 1', orgId: 'acme' }, { body: 'acme 2', orgId: 'acme' }, { body: 'globex 1', orgId: 'globex' }]) {
    expect((await t.app.inject({ method: 'POST', url: '/notes', payload: row })).statusCode).toBe(201);
  }
});
afterAll(async () => t.close());

describe('API keys with claims over REST', () => {
  it('stores claims with the key, shows them in the answer, the list and the key, and leaves them out of keys without', async () => {
    const { token } = await createKey({ name: 'acme-app', scopes: ['notes:read'], subject: '7', claims: { org: 'acme', plan: 'pro', seats: 5, trial: false, orgs: ['acme', 'acme-eu'] } });
    expect(token.claims).toEqual({ org: 'acme', plan: 'pro', seats: 5, trial: false, orgs: ['acme', 'acme-eu'] });
    const plain = await createKey({ name: 'plain', scopes: ['notes:read'] });
    expect(plain.token).not.toHaveProperty('claims');
    const list = json<TokenView[]>(await t.app.inject({ url: '/v1/tokens' }));
    expect(list.find((k) => k.id === token.id)?.claims).toEqual(token.claims);
    expect(list.find((k) => k.id === plain.token.id)).not.toHaveProperty('claims');
    expect(json<TokenView>(await t.app.inject({ url: `/v1/tokens/${token.id}` })).claims).toEqual(token.claims);
  });

  const refusals: [string, unknown, string][] = [
    ['not an object', ['org=acme'], '/claims'],
    ['a nested object', { org: { id: 1 } }, '/claims/org'],
    ['an array in an array', { orgs: [['a']] }, '/claims/orgs/0'],
    ['null', { org: null }, '/claims/org'],
    ['a name that is no identifier', { 'org-id': 'x' }, '/claims/org-id'],
    ['a name with a dot', { 'a.b': 'x' }, '/claims/a.b'],
    ['too long a string', { org: 'x'.repeat(201) }, '/claims/org'],
    ['too many claims', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`c${i}`, i])), '/claims'],
    ['too many items', { orgs: Array.from({ length: 51 }, (_, i) => `o${i}`) }, '/claims/orgs'],
    ['too many bytes', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`c${i}`, 'x'.repeat(200)])), '/claims'],
    ['NUL', { org: 'a\u0000b' }, '/claims/org'],
  ];
  for (const [what, claims, pointer] of refusals) {
    it(`refuses ${what} (422 naming ${pointer}) and creates nothing`, async () => {
      const before = json<unknown[]>(await t.app.inject({ url: '/v1/tokens' })).length;
      const response = await t.app.inject({ method: 'POST', url: '/v1/tokens', payload: { scopes: ['notes:read'], claims } });
      expect(response.statusCode, response.body).toBe(422);
      expect(response.headers['content-type']).toContain('application/problem+json');
      const problem = json<{ code: string; errors: { pointer: string }[] }>(response);
      expect(problem.code).toBe('validation-failed');
      expect(problem.errors.map((e) => e.pointer)).toContain(pointer);
      expect(json<unknown[]>(await t.app.inject({ url: '/v1/tokens' })).length).toBe(before);
    });
  }

  it("carries a key's claims into rules: a list rule orgId = @auth.claims.org, and claim tests", async () => {
    const acme = await createKey({ scopes: ['notes:read'], claims: { org: 'acme', plan: 'free' } });
    const globex = await createKey({ scopes: ['notes:read'], claims: { org: 'globex', plan: 'pro' } });
    const none = await createKey({ scopes: ['notes:read'] });
    const bodies = async (key: string, url = '/notes?count=true'): Promise<{ bodies: string[]; total: string | undefined }> => {
      const response = await t.app.inject({ url, headers: bearer(key) });
      expect(response.statusCode, response.body).toBe(200);
      return { bodies: json<{ body: string }[]>(response).map((r) => r.body).sort(), total: response.headers['x-total-count'] as string | undefined };
    };
    // Twice each: the second answer comes from the key cache, which must hold the claims too.
    for (let round = 0; round < 2; round++) {
      expect(await bodies(acme.key)).toEqual({ bodies: ['acme 1', 'acme 2'], total: '2' });
      expect(await bodies(globex.key)).toEqual({ bodies: ['globex 1'], total: '1' });
      expect(await bodies(none.key)).toEqual({ bodies: [], total: '0' });
    }
    expect((await t.app.inject({ url: '/notes/3', headers: bearer(acme.key) })).statusCode).toBe(404);
    // delete needs plan = 'pro' too: acme's free key may not, globex's pro key may.
    expect((await t.app.inject({ method: 'DELETE', url: '/notes/1', headers: bearer(acme.key) })).statusCode).toBe(403);
    const doomed = json<{ id: number }>(await t.app.inject({ method: 'POST', url: '/notes', payload: { body: 'globex 2', orgId: 'globex' } }));
    expect((await t.app.inject({ method: 'DELETE', url: `/notes/${doomed.id}`, headers: bearer(globex.key) })).statusCode).toBe(204);
  });
});

describe('GET /v1/auth/me with rules', () => {
  it("shows the credential's claims, and none for a key without", async () => {
    const { key } = await createKey({ scopes: ['notes:read'], claims: { org: 'acme', plan: 'pro' } });
    expect((await me(key)).claims).toEqual({ org: 'acme', plan: 'pro' });
    expect(await me(key)).toMatchObject({ kind: 'api-key', subject: null, scopes: ['notes:read'] });
    expect(await me((await createKey({ scopes: ['notes:read'] })).key)).not.toHaveProperty('claims');
    expect(await me()).not.toHaveProperty('claims');
  });

  it('per operation: allowed, refused, or by rule with its text; the booleans stay', async () => {
    const author = await me((await createKey({ scopes: ['posts:write'], subject: 'alice' })).key);
    const LIST = 'published = true or authorId = @auth.sub';
    expect(author.resources.posts).toEqual({
      read: true,
      create: true,
      update: true,
      delete: false,
      owner: null,
      rules: {
        list: { allowed: 'rule', rule: LIST },
        // read defaults to list
        read: { allowed: 'rule', rule: LIST },
        create: { allowed: 'rule', rule: 'authorId = @auth.sub' },
        update: { allowed: 'rule', rule: 'authorId = @auth.sub' },
        // A credential test that fails for this key: no row may be deleted.
        delete: { allowed: false },
      },
    });
    const anonymous = await me();
    expect(anonymous.resources.posts?.rules).toEqual({
      list: { allowed: 'rule', rule: LIST },
      read: { allowed: 'rule', rule: LIST },
      create: { allowed: false },
      update: { allowed: false },
      delete: { allowed: false },
    });
    expect(anonymous.resources.posts).toMatchObject({ read: true, create: false, update: false, delete: false });
    const moderator = await me((await createKey({ scopes: ['posts:moderate'] })).key);
    expect(moderator.resources.posts?.rules?.delete).toEqual({ allowed: true });
    // A resource without rules has no rules member.
    expect(moderator.resources.users).not.toHaveProperty('rules');
  });

  it('a rule false for every row makes the boolean false: a key without the org claim reads no note', async () => {
    const none = await me((await createKey({ scopes: ['notes:read'] })).key);
    expect(none.resources.notes).toMatchObject({ read: false, create: false, update: false, delete: false });
    expect(none.resources.notes?.rules?.list).toEqual({ allowed: false });
    const free = await me((await createKey({ scopes: ['notes:read'], claims: { org: 'acme' } })).key);
    expect(free.resources.notes).toMatchObject({ read: true, create: true, delete: false });
    // No plan claim: the test of it is never true, so the delete rule admits no row.
    expect(free.resources.notes?.rules?.delete).toEqual({ allowed: false });
    const acme = await me((await createKey({ scopes: ['notes:read'], claims: { org: 'acme', plan: 'pro' } })).key);
    expect(acme.resources.notes?.rules?.delete).toEqual({ allowed: 'rule', rule: "orgId = @auth.claims.org and @auth.claims.plan = 'pro'" });
  });

  it('per restricted field: read and write, by rule, refused or allowed', async () => {
    const user = await me((await createKey({ scopes: ['users:read'], subject: '1' })).key);
    expect(user.resources.users?.fields).toEqual({
      email: { read: { allowed: 'rule', rule: 'id = @auth.sub' }, write: { allowed: false } },
      note: { read: { allowed: false }, write: { allowed: true } },
    });
    const userAdmin = await me((await createKey({ scopes: ['users:read', 'users:admin'] })).key);
    expect(userAdmin.resources.users?.fields?.email?.write).toEqual({ allowed: true });
    expect(userAdmin.resources.users?.fields?.note?.read).toEqual({ allowed: true });
    const admin = await me((await createKey({ scopes: ['admin'] })).key);
    for (const field of Object.values(admin.resources.users?.fields ?? {})) expect(field).toEqual({ read: { allowed: true }, write: { allowed: true } });
    for (const rule of Object.values(admin.resources.posts?.rules ?? {})) expect(rule).toEqual({ allowed: true });
    expect(admin.resources.posts).not.toHaveProperty('fields');
  });
});

describe('/openapi.json states the rules', () => {
  type Operation = { description?: string };
  type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> } };
  let doc: Doc;
  beforeAll(async () => {
    doc = json<Doc>(await t.app.inject({ url: '/openapi.json' }));
  });

  it("each operation's description states its rule", () => {
    expect(doc.paths['/posts']?.get?.description).toContain('List rule: only rows where `published = true or authorId = @auth.sub` holds');
    expect(doc.paths['/posts']?.post?.description).toContain('Create rule: the row as stored must satisfy `authorId = @auth.sub`');
    expect(doc.paths['/posts/{id}']?.get?.description).toContain('Read rule: a row where `published = true or authorId = @auth.sub` does not hold is a 404');
    expect(doc.paths['/posts/{id}']?.patch?.description).toContain('Update rule: the row before and after the change must satisfy `authorId = @auth.sub`');
    expect(doc.paths['/posts/{id}']?.put?.description).toContain('Update rule:');
    expect(doc.paths['/posts/{id}']?.delete?.description).toContain("Delete rule: the row must satisfy `'posts:moderate' in @auth.scopes`");
    expect(doc.paths['/notes']?.get?.description).toContain('`orgId = @auth.claims.org`');
    // No rule, no sentence.
    expect(doc.paths['/users']?.get?.description).not.toContain('rule:');
    expect(doc.paths['/users/{id}']?.get?.description ?? '').not.toContain('Read rule');
  });

  it('restricted fields say who may read and write them', () => {
    const user = doc.components.schemas.User?.properties ?? {};
    expect(user.email?.description).toContain('Readable on the rows where `id = @auth.sub` holds (admin: always)');
    expect(user.email?.description).toContain('Writable with one of the scopes users:admin');
    expect(user.note?.description).toContain('Readable with one of the scopes users:admin');
    expect(user.name?.description ?? '').not.toContain('Readable');
    expect(doc.components.schemas.UserCreate?.properties.email?.description).toContain('Writable with one of the scopes users:admin');
  });
});
