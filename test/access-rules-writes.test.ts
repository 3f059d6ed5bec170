import type { LightMyRequestResponse } from 'fastify';
import type { RestgraphOptions } from '../src/app/app-options.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * The write side of access rules (docs/auth.md): presets fill fields from the credential and refuse
 * another value, on create and on every change; field write access refuses writing a field (403
 * naming it); both, with the row rules, hold through REST, GraphQL mutations, json-server's routes
 * and a singleton's PUT. Admin passes.
 */

// Every answer, the 403s of presets and field writes included, as /openapi.json documents it.
checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  posts:
    access: { read: public, write: authenticated }
    set: { orgId: "@auth.claims.org", authorId: "@auth.sub" }
    rules:
      list: "orgId = @auth.claims.org"
      create: "orgId = @auth.claims.org"
      update: "orgId = @auth.claims.org"
      delete: "orgId = @auth.claims.org"
    fields:
      title: { type: string, required: true }
      orgId: { type: string, required: true }
      authorId: { type: string, required: true }
      featured: { type: boolean, default: false, write: [posts:editor] }
      status: { type: string, write: "authorId = @auth.sub" }
      publishedAt: { type: datetime, write: [posts:editor] }
      score: { type: number, write: [posts:editor] }
      priority: { type: integer, write: "priority < 5" }
    relations:
      comments: { hasMany: comments, foreignKey: postId }
  comments:
    access: { read: public, write: authenticated }
    set: { authorId: "@auth.sub" }
    fields:
      text: { type: string }
      authorId: { type: string, required: true }
      postId: { type: integer, references: posts, onDelete: cascade }
  profiles:
    access: { read: public, write: authenticated }
    set: { userId: "@auth.sub" }
    fields:
      userId: { type: integer, required: true }
      bio: { type: string }
  settings:
    singleton: true
    access: { read: public, write: authenticated }
    set: { ownerId: "@auth.sub" }
    fields:
      motto: { type: string, write: [settings:editor] }
      theme: { type: string }
      ownerId: { type: string }
`;

interface Problem {
  code: string;
  detail: string;
  errors?: { pointer?: string; detail: string }[];
}
type Row = Record<string, unknown>;

/** A 403 naming `field` with errors[].pointer (and in its detail, unless an API version renames it). */
function expectRefusal(response: LightMyRequestResponse, field: string, inDetail = true): Problem {
  expect(response.statusCode, response.body).toBe(403);
  const problem = json<Problem>(response);
  expect(problem.code).toBe('forbidden');
  expect(problem.errors?.map((e) => e.pointer)).toEqual([`/${field}`]);
  if (inDetail) expect(problem.detail).toContain(field);
  return problem;
}

interface Principals {
  alice: string;
  carol: string;
  bob: string;
  noOrg: string;
  editor: string;
  orgAdmin: string;
}

async function principals(): Promise<Principals> {
  return {
    alice: await bearerJwt({ sub: 'alice', org: 'acme' }),
    carol: await bearerJwt({ sub: 'carol', org: 'acme' }),
    bob: await bearerJwt({ sub: 'bob', org: 'globex' }),
    noOrg: await bearerJwt({ sub: 'dave' }),
    editor: await bearerJwt({ sub: 'ed', org: 'acme', scope: 'posts:editor settings:editor' }),
    orgAdmin: await bearerJwt({ sub: 'root', org: 'acme', scope: 'admin' }),
  };
}

/** An app on `schema` (with `options`) that accepts the principals' JWTs, and their Authorization headers. */
async function startWithPrincipals(schema: string, options: RestgraphOptions = {}): Promise<{ t: TestApp; p: Principals }> {
  return { t: await startTestApp({ schema: parseSchemaText(schema), jwt: { secret: RULES_JWT_SECRET }, ...options }), p: await principals() };
}

describe('presets and field write access through REST', () => {
  let t: TestApp;
  let p: Principals;
  beforeAll(async () => ({ t, p } = await startWithPrincipals(SCHEMA)));
  afterAll(async () => t.close());

  const send = (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, authorization: string, payload?: Row) =>
    t.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload }) });
  /** Every post, as the admin sees it. */
  const allPosts = async (): Promise<Row[]> => json<Row[]>(await t.app.inject({ url: '/posts?limit=1000' }));
  const postOf = async (id: unknown): Promise<Row> => json<Row>(await t.app.inject({ url: `/posts/${String(id)}` }));

  it('fills preset fields from the credential on create, and accepts the same value named', async () => {
    const created = await send('POST', '/posts', p.alice, { title: 'alice 1' });
    expect(created.statusCode, created.body).toBe(201);
    expect(json<Row>(created)).toMatchObject({ title: 'alice 1', orgId: 'acme', authorId: 'alice', featured: false });
    const named = await send('POST', '/posts', p.carol, { title: 'carol 1', orgId: 'acme', authorId: 'carol' });
    expect(named.statusCode, named.body).toBe(201);
  });

  it('refuses a create naming another value than the credential, storing nothing', async () => {
    const before = (await allPosts()).length;
    expectRefusal(await send('POST', '/posts', p.alice, { title: 'forged org', orgId: 'globex' }), 'orgId');
    expectRefusal(await send('POST', '/posts', p.alice, { title: 'forged author', authorId: 'carol' }), 'authorId');
    expectRefusal(await send('POST', '/posts', p.alice, { title: 'null author', authorId: null }), 'authorId');
    expect((await allPosts()).length).toBe(before);
  });

  it('refuses a create when the credential has no value for a preset', async () => {
    const refused = expectRefusal(await send('POST', '/posts', p.noOrg, { title: 'no org' }), 'orgId');
    expect(refused.detail).toMatch(/no @auth\.claims\.org/);
    expect((await allPosts()).map((r) => r.title)).not.toContain('no org');
  });

  it('refuses an update or replace that changes a preset field, and changes nothing', async () => {
    const id = json<Row>(await send('POST', '/posts', p.alice, { title: 'keep me' })).id;
    expectRefusal(await send('PATCH', `/posts/${String(id)}`, p.alice, { authorId: 'carol', title: 'moved' }), 'authorId');
    expectRefusal(await send('PATCH', `/posts/${String(id)}`, p.carol, { authorId: 'carol' }), 'authorId');
    expectRefusal(await send('PATCH', `/posts/${String(id)}`, p.alice, { orgId: 'globex' }), 'orgId');
    expectRefusal(await send('PUT', `/posts/${String(id)}`, p.alice, { title: 'moved', orgId: 'acme', authorId: 'carol' }), 'authorId');
    expect(await postOf(id)).toMatchObject({ title: 'keep me', orgId: 'acme', authorId: 'alice' });
    // Echoing the stored value, or leaving the field out of a replace, changes nothing: allowed.
    expect((await send('PATCH', `/posts/${String(id)}`, p.alice, { authorId: 'alice', title: 'echo' })).statusCode).toBe(200);
    const replaced = await send('PUT', `/posts/${String(id)}`, p.carol, { title: 'replaced by carol' });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(await postOf(id)).toMatchObject({ title: 'replaced by carol', orgId: 'acme', authorId: 'alice' });
    expect((await send('PUT', `/posts/${String(id)}`, p.carol, { title: 'echo', orgId: 'acme', authorId: 'alice' })).statusCode).toBe(200);
  });

  it('converts the credential value to the field type, and refuses one that does not convert', async () => {
    const seven = await bearerJwt({ sub: '7' });
    const created = await send('POST', '/profiles', seven, { bio: 'b' });
    expect(created.statusCode, created.body).toBe(201);
    expect(json<Row>(created).userId).toBe(7);
    expect((await send('POST', '/profiles', seven, { userId: 7 })).statusCode).toBe(201);
    expect(json<Row>(await send('POST', '/profiles', seven, { userId: '7' })).userId).toBe(7);
    expectRefusal(await send('POST', '/profiles', seven, { userId: 8 }), 'userId');
    const refused = expectRefusal(await send('POST', '/profiles', p.alice, { bio: 'b' }), 'userId');
    expect(refused.detail).toContain('has @auth.sub "alice", which is not a valid userId (integer)');
    expect(json<Row[]>(await t.app.inject({ url: '/profiles' })).map((r) => r.userId)).toEqual([7, 7, 7]);
  });

  it('lets admin set and change preset fields', async () => {
    const chosen = await send('POST', '/posts', p.orgAdmin, { title: 'for zed', orgId: 'globex', authorId: 'zed' });
    expect(chosen.statusCode, chosen.body).toBe(201);
    expect(json<Row>(chosen)).toMatchObject({ orgId: 'globex', authorId: 'zed' });
    // Left out: the admin credential's own values.
    expect(json<Row>(await send('POST', '/posts', p.orgAdmin, { title: 'by root' }))).toMatchObject({ orgId: 'acme', authorId: 'root' });
    const id = json<Row>(chosen).id;
    const moved = await send('PATCH', `/posts/${String(id)}`, p.orgAdmin, { authorId: 'yan', orgId: 'acme' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await postOf(id)).toMatchObject({ orgId: 'acme', authorId: 'yan' });
  });

  it('refuses writing a field the credential may not write (scopes), naming it', async () => {
    const before = (await allPosts()).length;
    expectRefusal(await send('POST', '/posts', p.alice, { title: 'featured', featured: true }), 'featured');
    expectRefusal(await send('POST', '/posts', p.alice, { title: 'featured', featured: false }), 'featured');
    expect((await allPosts()).length).toBe(before);
    const id = json<Row>(await send('POST', '/posts', p.editor, { title: 'by editor', featured: true })).id;
    expect(await postOf(id)).toMatchObject({ featured: true, authorId: 'ed' });
    const own = json<Row>(await send('POST', '/posts', p.alice, { title: 'plain' })).id;
    expectRefusal(await send('PATCH', `/posts/${String(own)}`, p.alice, { featured: true }), 'featured');
    expectRefusal(await send('PUT', `/posts/${String(own)}`, p.alice, { title: 'plain', featured: true }), 'featured');
    expect((await postOf(own)).featured).toBe(false);
    // Not changing it is no write of it.
    expect((await send('PATCH', `/posts/${String(own)}`, p.alice, { featured: false, title: 'plain 2' })).statusCode).toBe(200);
    expect((await send('PATCH', `/posts/${String(own)}`, p.editor, { featured: true })).statusCode).toBe(200);
    expect((await send('PATCH', `/posts/${String(own)}`, p.orgAdmin, { featured: false })).statusCode).toBe(200);
  });

  it('checks a field write rule on the created row in the transaction, and on the row before and after a change', async () => {
    const before = (await allPosts()).length;
    expectRefusal(await send('POST', '/posts', p.alice, { title: 'urgent', priority: 7 }), 'priority');
    expect((await allPosts()).length).toBe(before);
    const id = String(json<Row>(await send('POST', '/posts', p.alice, { title: 'calm', priority: 3 })).id);
    expectRefusal(await send('PATCH', `/posts/${id}`, p.alice, { priority: 9 }), 'priority');
    expectRefusal(await send('PUT', `/posts/${id}`, p.alice, { title: 'calm', priority: 9 }), 'priority');
    expect((await postOf(id)).priority).toBe(3);
    expect((await send('PATCH', `/posts/${id}`, p.orgAdmin, { priority: 9 })).statusCode).toBe(200);
    // The row before fails the rule: no lowering it either.
    expectRefusal(await send('PATCH', `/posts/${id}`, p.alice, { priority: 2 }), 'priority');
    expect((await postOf(id)).priority).toBe(9);
  });

  it('lets a replace echo what a read returned (GET, edit, PUT) without writing restricted fields', async () => {
    const created = await send('POST', '/posts', p.editor, { title: 'dated', publishedAt: '2024-01-01T10:00:00+02:00', score: 1.5, featured: true });
    expect(created.statusCode, created.body).toBe(201);
    const id = json<Row>(created).id;
    const read = json<Row>(await t.app.inject({ url: `/posts/${String(id)}`, headers: { authorization: p.carol } }));
    const echoed = await send('PUT', `/posts/${String(id)}`, p.carol, { ...read, title: 'retitled' });
    expect(echoed.statusCode, echoed.body).toBe(200);
    expect(await postOf(id)).toMatchObject({ title: 'retitled', featured: true, score: 1.5, authorId: 'ed' });
    expectRefusal(await send('PUT', `/posts/${String(id)}`, p.carol, { ...read, publishedAt: '2025-01-01T00:00:00Z' }), 'publishedAt');
    // Left out of a replace, a field takes its default: that changes it, so it is a write of it.
    const withoutFeatured = Object.fromEntries(Object.entries(read).filter(([name]) => name !== 'featured'));
    expectRefusal(await send('PUT', `/posts/${String(id)}`, p.carol, withoutFeatured), 'featured');
  });

  it('checks a field write rule on the row as stored and on the row before', async () => {
    const created = await send('POST', '/posts', p.alice, { title: 'with status', status: 'draft' });
    expect(created.statusCode, created.body).toBe(201);
    const id = json<Row>(created).id;
    expectRefusal(await send('PATCH', `/posts/${String(id)}`, p.carol, { status: 'published' }), 'status');
    expect((await send('PATCH', `/posts/${String(id)}`, p.carol, { title: 'carol may edit the title' })).statusCode).toBe(200);
    expect((await send('PATCH', `/posts/${String(id)}`, p.alice, { status: 'published' })).statusCode).toBe(200);
    expect(await postOf(id)).toMatchObject({ status: 'published', title: 'carol may edit the title' });
    // A row someone else wrote: alice may not set its status.
    const other = json<Row>(await send('POST', '/posts', p.orgAdmin, { title: 'zed', authorId: 'zed' })).id;
    expectRefusal(await send('PATCH', `/posts/${String(other)}`, p.alice, { status: 'x' }), 'status');
    expect((await postOf(other)).status).toBeNull();
  });

  it('fills and guards presets and field writes on a singleton PUT', async () => {
    const first = await send('PUT', '/settings', p.alice, { theme: 'dark' });
    expect(first.statusCode, first.body).toBe(200);
    expect(json<Row>(first)).toMatchObject({ theme: 'dark', ownerId: 'alice' });
    expectRefusal(await send('PUT', '/settings', p.bob, { theme: 'light', ownerId: 'bob' }), 'ownerId');
    expectRefusal(await send('PUT', '/settings', p.bob, { theme: 'light', motto: 'mine' }), 'motto');
    expectRefusal(await send('PATCH', '/settings', p.bob, { motto: 'mine' }), 'motto');
    const kept = await send('PUT', '/settings', p.bob, { theme: 'light' });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(json<Row>(kept)).toMatchObject({ theme: 'light', ownerId: 'alice', motto: null });
    expect((await send('PATCH', '/settings', p.editor, { motto: 'edited' })).statusCode).toBe(200);
  });
});

describe('presets, field write access and row rules through GraphQL mutations', () => {
  let t: TestApp;
  let p: Principals;
  beforeAll(async () => ({ t, p } = await startWithPrincipals(SCHEMA)));
  afterAll(async () => t.close());

  interface GraphqlAnswer {
    data?: Record<string, Row | null> | null;
    errors?: { message: string; extensions: { code: string; errors?: { pointer?: string }[] } }[];
  }
  const graphql = async (authorization: string, query: string, variables: Row = {}): Promise<GraphqlAnswer> =>
    json<GraphqlAnswer>(await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization }, payload: { query, variables } }));
  const refusedAt = (answer: GraphqlAnswer, field: string): void => {
    expect(answer.errors?.[0]?.extensions.code, JSON.stringify(answer)).toBe('forbidden');
    expect(answer.errors?.[0]?.extensions.errors?.map((e) => e.pointer)).toContain(`/${field}`);
  };
  const CREATE = 'mutation($input: PostCreateInput!) { createPost(input: $input) { id orgId authorId featured } }';
  const UPDATE = 'mutation($id: ID!, $input: PostUpdateInput!) { updatePost(id: $id, input: $input) { id authorId status } }';
  const REPLACE = 'mutation($id: ID!, $input: PostCreateInput!) { replacePost(id: $id, input: $input) { id authorId orgId } }';
  const count = async (): Promise<number> => json<Row[]>(await t.app.inject({ url: '/posts?limit=1000' })).length;

  it('creates with presets filled: the create input does not require them', async () => {
    const answer = await graphql(p.alice, CREATE, { input: { title: 'gql' } });
    expect(answer.errors, JSON.stringify(answer)).toBeUndefined();
    expect(answer.data?.createPost).toMatchObject({ orgId: 'acme', authorId: 'alice', featured: false });
    const schema = json<{ data: { __type: { inputFields: { name: string; type: { kind: string } }[] } } }>(
      await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __type(name: "PostCreateInput") { inputFields { name type { kind } } } }' } }),
    );
    const kinds = Object.fromEntries(schema.data.__type.inputFields.map((f) => [f.name, f.type.kind]));
    expect(kinds).toMatchObject({ title: 'NON_NULL', orgId: 'SCALAR', authorId: 'SCALAR' });
  });

  it('refuses another preset value, a preset change and a field write, storing nothing', async () => {
    const before = await count();
    refusedAt(await graphql(p.alice, CREATE, { input: { title: 'x', orgId: 'globex' } }), 'orgId');
    refusedAt(await graphql(p.alice, CREATE, { input: { title: 'x', featured: true } }), 'featured');
    expect(await count()).toBe(before);
    const id = (await graphql(p.alice, CREATE, { input: { title: 'mine' } })).data?.createPost?.id;
    refusedAt(await graphql(p.alice, UPDATE, { id, input: { authorId: 'carol' } }), 'authorId');
    refusedAt(await graphql(p.carol, UPDATE, { id, input: { status: 'x' } }), 'status');
    refusedAt(await graphql(p.alice, REPLACE, { id, input: { title: 'r', authorId: 'carol' } }), 'authorId');
    const replaced = await graphql(p.alice, REPLACE, { id, input: { title: 'r' } });
    expect(replaced.data?.replacePost, JSON.stringify(replaced)).toMatchObject({ authorId: 'alice', orgId: 'acme' });
    expect((await graphql(p.alice, UPDATE, { id, input: { status: 'done' } })).data?.updatePost).toMatchObject({ status: 'done' });
    const admin = await graphql(p.orgAdmin, UPDATE, { id, input: { authorId: 'carol' } });
    expect(admin.data?.updatePost, JSON.stringify(admin)).toMatchObject({ authorId: 'carol' });
  });

  it('holds the row rules: another tenant cannot see, change or delete a row, nor create in another tenant', async () => {
    const id = (await graphql(p.alice, CREATE, { input: { title: 'acme only' } })).data?.createPost?.id;
    const change = await graphql(p.bob, UPDATE, { id, input: { title: 'taken' } });
    expect(change.errors?.[0]?.extensions.code).toBe('not-found');
    const removal = await graphql(p.bob, `mutation($id: ID!) { deletePost(id: $id) }`, { id });
    expect(removal.errors?.[0]?.extensions.code).toBe('not-found');
    expect(await count()).toBeGreaterThan(0);
    expect(json<Row>(await t.app.inject({ url: `/posts/${String(id)}` })).title).toBe('acme only');
    const read = await graphql(p.bob, `query($id: ID!) { post(id: $id) { id } }`, { id });
    expect(read.data?.post ?? null).toBeNull();
    const before = await count();
    refusedAt(await graphql(p.bob, CREATE, { input: { title: 'into acme', orgId: 'acme' } }), 'orgId');
    expect(await count()).toBe(before);
    expect((await graphql(p.bob, CREATE, { input: { title: 'own tenant' } })).data?.createPost).toMatchObject({ orgId: 'globex', authorId: 'bob' });
  });

  it('fills a preset through a singleton mutation', async () => {
    const answer = await graphql(p.carol, 'mutation { replaceSettings(input: { theme: "blue" }) { theme ownerId } }');
    expect(answer.data?.replaceSettings, JSON.stringify(answer)).toMatchObject({ theme: 'blue', ownerId: 'carol' });
    refusedAt(await graphql(p.bob, 'mutation { updateSettings(input: { ownerId: "bob" }) { ownerId } }'), 'ownerId');
    refusedAt(await graphql(p.bob, 'mutation { updateSettings(input: { motto: "m" }) { motto } }'), 'motto');
  });
});

describe('presets, field write access and row rules through json-server routes', () => {
  let t: TestApp;
  let p: Principals;
  beforeAll(async () => ({ t, p } = await startWithPrincipals(SCHEMA, { compat: 'json-server' })));
  afterAll(async () => t.close());

  const send = (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, authorization: string, payload?: Row) =>
    t.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload }) });

  it('fills presets on a create with a chosen id and on a nested create', async () => {
    const chosen = await send('POST', '/posts', p.alice, { id: 50, title: 'chosen' });
    expect(chosen.statusCode, chosen.body).toBe(201);
    expect(json<Row>(chosen)).toMatchObject({ id: 50, orgId: 'acme', authorId: 'alice' });
    const nested = await send('POST', '/posts/50/comments', p.carol, { text: 'hi' });
    expect(nested.statusCode, nested.body).toBe(201);
    expect(json<Row>(nested)).toMatchObject({ postId: 50, authorId: 'carol' });
    expectRefusal(await send('POST', '/posts/50/comments', p.carol, { text: 'forged', authorId: 'alice' }), 'authorId');
    // Another tenant's post is not there for bob (GET /posts/50 is a 404): referring to it is as
    // referring to a post that does not exist, through the nested route or not.
    expect((await t.app.inject({ url: '/posts/50', headers: { authorization: p.bob } })).statusCode).toBe(404);
    const hidden = await send('POST', '/posts/50/comments', p.bob, { text: 'intruder' });
    const missing = await send('POST', '/posts/9999/comments', p.bob, { text: 'intruder' });
    expect(hidden.statusCode).toBe(422);
    expect(json<Problem>(hidden).errors).toEqual([{ pointer: '/postId', detail: 'refers to post 50, which does not exist' }]);
    expect(json<Problem>(missing).errors).toEqual([{ pointer: '/postId', detail: 'refers to post 9999, which does not exist' }]);
    expect((await send('POST', '/comments', p.bob, { text: 'intruder', postId: 50 })).statusCode).toBe(422);
    const comments = json<Row[]>(await t.app.inject({ url: '/comments' }));
    expect(comments.map((c) => c.text)).toEqual(['hi']);
    // A reference a row already holds is kept by a replace, even once its target is hidden.
    const mine = json<Row>(await send('POST', '/comments', p.bob, { text: 'mine' }));
    expect((await send('PATCH', `/comments/${String(mine.id)}`, p.carol, { postId: 50 })).statusCode).toBe(200);
    expect((await send('PUT', `/comments/${String(mine.id)}`, p.bob, { text: 'kept', postId: 50, authorId: 'bob' })).statusCode).toBe(200);
    expect((await send('PATCH', `/comments/${String(mine.id)}`, p.bob, { postId: null })).statusCode).toBe(200);
    expect((await send('PATCH', `/comments/${String(mine.id)}`, p.bob, { postId: 50 })).statusCode).toBe(422);
  });

  it('refuses other values, changes of presets and field writes, and leaves the id free', async () => {
    expectRefusal(await send('POST', '/posts', p.alice, { id: 60, title: 'forged', orgId: 'globex' }), 'orgId');
    expectRefusal(await send('POST', '/posts', p.alice, { id: 61, title: 'featured', featured: true }), 'featured');
    expect((await t.app.inject({ url: '/posts/60' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/posts/61' })).statusCode).toBe(404);
    expect((await send('POST', '/posts', p.alice, { id: 60, title: 'free' })).statusCode).toBe(201);
    expectRefusal(await send('PATCH', '/posts/60', p.alice, { authorId: 'carol' }), 'authorId');
    expectRefusal(await send('PUT', '/posts/60', p.alice, { title: 'free', orgId: 'globex' }), 'orgId');
    expectRefusal(await send('PATCH', '/posts/60', p.carol, { status: 'x' }), 'status');
  });

  it('holds the row rules on json-server writes', async () => {
    expect((await send('PATCH', '/posts/60', p.bob, { title: 'taken' })).statusCode).toBe(404);
    expect((await send('PUT', '/posts/60', p.bob, { title: 'taken' })).statusCode).toBe(404);
    expect((await send('DELETE', '/posts/60', p.bob)).statusCode).toBe(404);
    expect(json<Row>(await t.app.inject({ url: '/posts/60' })).title).toBe('free');
    // Bob's create lands in his own tenant: alice cannot change it.
    const bobs = json<Row>(await send('POST', '/posts', p.bob, { title: 'globex post' }));
    expect(bobs.orgId).toBe('globex');
    expect((await send('DELETE', `/posts/${String(bobs.id)}`, p.alice)).statusCode).toBe(404);
    expect((await send('DELETE', `/posts/${String(bobs.id)}`, p.bob)).statusCode).toBe(200);
  });
});

describe('presets and field write access through an API version that renames the field', () => {
  let t: TestApp;
  let p: Principals;
  beforeAll(async () => {
    const schema = `
versions: [v1, v2]
resources:
  notes:
    access: { read: public, write: authenticated }
    set: { team: "@auth.claims.org" }
    fields:
      text: { type: string }
      team: { type: string, required: true, renamedFrom: org, renamedIn: v2 }
      pinned: { type: boolean, write: [notes:pin], renamedFrom: sticky, renamedIn: v2 }
  prefs:
    singleton: true
    access: { read: public, write: authenticated }
    set: { ownerId: "@auth.sub" }
    fields:
      colour: { type: string }
      ownerId: { type: string, addedIn: v2 }
`;
    ({ t, p } = await startWithPrincipals(schema));
  });
  afterAll(async () => t.close());

  it("names the field as the version does, and keeps a preset the version's replace leaves out", async () => {
    const send = (method: 'POST' | 'PUT', url: string, payload: Row) => t.app.inject({ method, url, headers: { authorization: p.alice }, payload });
    expectRefusal(await send('POST', '/v1/notes', { text: 'x', org: 'globex' }), 'org', false);
    expectRefusal(await send('POST', '/v1/notes', { text: 'x', sticky: true }), 'sticky', false);
    expectRefusal(await send('POST', '/v2/notes', { text: 'x', pinned: true }), 'pinned');
    const created = await send('POST', '/v1/notes', { text: 'x' });
    expect(json<Row>(created)).toMatchObject({ text: 'x', org: 'acme' });
    const id = String(json<Row>(created).id);
    expectRefusal(await send('PUT', `/v2/notes/${id}`, { text: 'y', team: 'globex' }), 'team');
    const replaced = await send('PUT', `/v1/notes/${id}`, { text: 'y' });
    expect(json<Row>(replaced)).toMatchObject({ text: 'y', org: 'acme' });
    // A singleton's first PUT through a version without the preset field still fills it.
    expect((await send('PUT', '/v1/prefs', { colour: 'red' })).statusCode).toBe(200);
    expect(json<Row>(await t.app.inject({ url: '/v2/prefs' }))).toMatchObject({ colour: 'red', ownerId: 'alice' });
  });
});
