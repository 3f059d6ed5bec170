import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { Lexer, Source, TokenKind, buildSchema } from 'graphql';
import { serverAudits, type AuditResult } from 'graphql-http';
import { ClientError, GraphQLClient } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * The GraphQL-over-HTTP side of /graphql, through a real socket and app.inject(): graphql-http's
 * server audits, a real client (graphql-request), cacheable GETs, automatic persisted queries, the
 * protection limits (refused before any SQL runs), GraphiQL and the SDL, and bad input of every
 * kind (never a 5xx, never a change to the stored data).
 */

type Row = Record<string, unknown>;
interface GraphqlError {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions: Record<string, unknown>;
}
interface GraphqlBody {
  data?: Row | null;
  errors?: GraphqlError[];
}

const JSON_TYPE = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8';
const STRONG_TAG = /^"[A-Za-z0-9_-]+"$/;
const ALLOW = 'GET, POST, OPTIONS';
/** Names no Authorization header (the test app otherwise acts as admin). */
const ANONYMOUS = { authorization: '' };
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const BODY_LIMIT = 64 * 1024;

let t: TestApp;
let graphqlUrl = '';
/** Every SQL statement the main app ran, in order (onSqlStatement). */
const statements: string[] = [];

// ---- helpers ------------------------------------------------------------------------------

async function post(body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

async function postRaw(payload: string, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/graphql', headers, payload });
}

/** GET /graphql with these parameters; objects are sent as JSON, as GraphQL-over-HTTP says. */
async function get(params: Record<string, unknown>, headers: Record<string, string> = {}, app: TestApp = t): Promise<LightMyRequestResponse> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  return app.app.inject({ method: 'GET', url: `/graphql?${search.toString()}`, headers });
}

function describeResponse(response: LightMyRequestResponse): string {
  return `${String(response.statusCode)} ${String(response.headers['content-type'])} ${response.body.slice(0, 400)}`;
}

/** A 200 whose body is exactly `{"data": data}`. */
function expectData(response: LightMyRequestResponse, data: Row, contentType = JSON_TYPE): void {
  expect(response.statusCode, describeResponse(response)).toBe(200);
  expect(response.headers['content-type']).toBe(contentType);
  expect(json(response)).toEqual({ data });
}

/** A GraphQL error response: the HTTP status, a JSON content type, and `code` on the first error. */
function expectError(response: LightMyRequestResponse, status: number, code: string, contentType = JSON_TYPE): GraphqlError {
  expect(response.statusCode, describeResponse(response)).toBe(status);
  expect(response.headers['content-type'], describeResponse(response)).toBe(contentType);
  const body = json<GraphqlBody>(response);
  expect(body.errors?.length, describeResponse(response)).toBeGreaterThan(0);
  const first = body.errors?.[0];
  if (first === undefined) throw new Error('no error in the response');
  expect(typeof first.message).toBe('string');
  expect(first.extensions.code, describeResponse(response)).toBe(code);
  expect(typeof first.extensions.status).toBe('number');
  return first;
}

/** A request refused before execution: errors only (no `data` entry). */
function expectRefused(response: LightMyRequestResponse, status: number, code: string, contentType = JSON_TYPE): GraphqlError {
  const error = expectError(response, status, code, contentType);
  expect(json<GraphqlBody>(response)).not.toHaveProperty('data');
  return error;
}

/** Everything stored, through REST as admin: any change to any row changes this text. */
async function storedData(): Promise<string> {
  const parts: string[] = [];
  for (const resource of ['users', 'posts', 'products', 'orders']) {
    const response = await t.app.inject({ method: 'GET', url: `/${resource}?limit=1000` });
    expect(response.statusCode).toBe(200);
    parts.push(response.body);
  }
  return parts.join('\n');
}

/** Runs `send` and returns its response with the SQL statements it ran. */
async function withStatements(send: () => Promise<LightMyRequestResponse>): Promise<{ response: LightMyRequestResponse; sql: string[] }> {
  const from = statements.length;
  const response = await send();
  return { response, sql: statements.slice(from) };
}

async function mutate(query: string, variables: Row = {}): Promise<Row> {
  const response = await post({ query, variables });
  expect(response.statusCode, response.body).toBe(200);
  const body = json<GraphqlBody>(response);
  expect(body.errors, response.body).toBeUndefined();
  return body.data ?? {};
}

async function createPost(title: string, userId: string, extra: Row = {}): Promise<string> {
  const data = await mutate('mutation($input: PostCreateInput!) { createPost(input: $input) { id } }', { input: { title, userId, ...extra } });
  return String((data.createPost as Row).id);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function persisted(sha256Hash: unknown, version: unknown = 1): Row {
  return { persistedQuery: { version, sha256Hash } };
}

/** Lexical tokens of a document, counted as graphql-js's parser counts them for maxTokens. */
function tokenCount(document: string): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count++;
  return count;
}

/**
 * `{ users(first: 1) { posts(first: 1) { user { posts(first: 1) { … id } } } } }` with exactly
 * `depth` levels of fields, and the data it returns: user 1 and post 1 (hers) all the way down.
 */
function nested(depth: number): { query: string; data: Row } {
  let selection = 'id';
  let data: unknown = { id: '1' };
  for (let level = depth - 1; level >= 1; level--) {
    const [field, args, list] = level === 1 ? ['users', '(first: 1)', true] : level % 2 === 0 ? ['posts', '(first: 1)', true] : ['user', '', false];
    selection = `${field}${args} { ${selection} }`;
    data = { [field]: list ? [data] : data };
  }
  return { query: `{ ${selection} }`, data: data as Row };
}

function repeat(count: number, make: (index: number) => string): string {
  return Array.from({ length: count }, (_, index) => make(index)).join(' ');
}

async function clientError(promise: Promise<unknown>): Promise<ClientError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ClientError) return error;
    throw error;
  }
  throw new Error('the request succeeded; a ClientError was expected');
}

beforeAll(async () => {
  // Only the statements of requests: the event dispatcher and webhook worker read their own
  // (_restgraph_) tables in the background on timers.
  t = await startTestApp({ onSqlStatement: (sql) => (sql.includes('"_restgraph_') ? undefined : statements.push(sql)), bodyLimitBytes: BODY_LIMIT });
  // Ids in order: users 1 Alice, 2 Bob; posts 1 Hello and 2 World (Alice's), 3 Third (Bob's).
  for (const input of [{ name: 'Alice', email: 'alice@example.com' }, { name: 'Bob' }]) {
    await mutate('mutation($input: UserCreateInput!) { createUser(input: $input) { id } }', { input });
  }
  await createPost('Hello', '1', { tags: { a: [1, 2] } });
  await createPost('World', '1');
  await createPost('Third', '2');
  await mutate('mutation { createProduct(input: {name: "Widget", sku: "SKU-1", price: 10}) { id } }');
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  graphqlUrl = `${address}/graphql`;
});
afterAll(async () => t.close());

// ---- 1. graphql-http's audits -------------------------------------------------------------

const audits = serverAudits({ url: () => graphqlUrl });

/** What went wrong, for the assertion message (the audit may have read the body already). */
async function failureOf(result: AuditResult): Promise<string> {
  if (result.status === 'ok') return '';
  let text = '';
  try {
    text = await result.response.clone().text();
  } catch {
    text = '(body already read)';
  }
  return `${result.reason}; got ${String(result.response.status)} ${text.slice(0, 300)}`;
}

describe('GraphQL-over-HTTP audits (graphql-http serverAudits, anonymous, real socket)', () => {
  it('the audit list covers MUST and SHOULD requirements', () => {
    expect(audits.filter((a) => a.name.startsWith('MUST ')).length).toBeGreaterThanOrEqual(10);
    expect(audits.filter((a) => a.name.startsWith('SHOULD ')).length).toBeGreaterThanOrEqual(10);
  });

  for (const audit of audits) {
    const level = audit.name.split(' ')[0];
    it(`${audit.name} [${audit.id}]`, async () => {
      const result = await audit.fn();
      const failure = await failureOf(result);
      if (level === 'MAY') {
        // Optional behaviour need not be there, but a request never gets a 5xx.
        if (result.status !== 'ok') expect(result.response.status, failure).toBeLessThan(500);
      } else {
        expect(result.status, failure).toBe('ok');
      }
    });
  }
});

// ---- 2. a real client ---------------------------------------------------------------------

describe('a real client: graphql-request against the listening server', () => {
  const admin = (): GraphQLClient => new GraphQLClient(graphqlUrl, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });

  it('runs a query with variables', async () => {
    const data = await admin().request<Row>('query UserWithPosts($id: ID!, $n: Int) { user(id: $id) { name posts(first: $n, sort: [TITLE_DESC]) { title } } }', { id: '1', n: 1 });
    expect(data).toEqual({ user: { name: 'Alice', posts: [{ title: 'World' }] } });
  });

  it('runs a mutation with variables; REST then sees the row', async () => {
    const data = await admin().request<{ createUser: Row }>('mutation Create($input: UserCreateInput!) { createUser(input: $input) { id name email bio } }', {
      input: { name: 'Carol', email: 'carol@example.com' },
    });
    expect(data.createUser).toMatchObject({ name: 'Carol', email: 'carol@example.com', bio: null });
    expect(String(data.createUser.id)).toMatch(/^[1-9]\d*$/);
    const rest = await t.app.inject({ method: 'GET', url: `/users/${String(data.createUser.id)}` });
    expect(rest.statusCode).toBe(200);
    expect(json<Row>(rest)).toMatchObject({ id: Number(data.createUser.id), name: 'Carol', email: 'carol@example.com' });
  });

  it('an error reaches the client as a ClientError with extensions.code (and the partial data)', async () => {
    const error = await clientError(admin().request('query Missing { user(id: "999") { id name } }'));
    expect(error.response.status).toBe(200);
    expect(error.response.data).toEqual({ user: null });
    expect(error.response.errors?.[0]?.extensions).toEqual({ code: 'not-found', status: 404 });
    expect(error.response.errors?.[0]?.path).toEqual(['user']);
  });

  it('anonymous reads of a private resource, and validation errors, are ClientErrors with their codes', async () => {
    const anonymous = new GraphQLClient(graphqlUrl);
    const denied = await clientError(anonymous.request('{ users { id } }'));
    expect(denied.response.errors?.[0]?.extensions).toEqual({ code: 'authentication-required', status: 401 });
    // The client accepts application/graphql-response+json: a document refused before execution is a 400.
    const invalid = await clientError(anonymous.request('{ posts { titel } }'));
    expect(invalid.response.status).toBe(400);
    expect(invalid.response.errors?.[0]?.extensions).toEqual({ code: 'graphql-validation', status: 400 });
    expect(invalid.response.errors?.[0]?.message).toBe('Cannot query field "titel" on type "Post". Did you mean "title"?');
  });

  it('queries over GET (method: GET) get a cacheable answer', async () => {
    const client = new GraphQLClient(graphqlUrl, { method: 'GET' });
    const response = await client.rawRequest<Row>('query Titles { posts(sort: [ID_ASC], first: 2) { title } }');
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ posts: [{ title: 'Hello' }, { title: 'World' }] });
    expect(response.headers.get('etag')).toMatch(STRONG_TAG);
    expect(response.headers.get('cache-control')).toBe('public, max-age=0');
  });
});

// ---- 3. GET queries: caching --------------------------------------------------------------

describe('GET queries are cacheable', () => {
  const titles = '{ posts(sort: [ID_ASC], first: 3) { id title } }';
  const titlesData = { posts: [{ id: '1', title: 'Hello' }, { id: '2', title: 'World' }, { id: '3', title: 'Third' }] };

  it('anonymous: 200 with a strong ETag, Cache-Control public, max-age=0, and Vary', async () => {
    const response = await get({ query: titles }, ANONYMOUS);
    expectData(response, titlesData);
    expect(response.headers.etag).toMatch(STRONG_TAG);
    expect(response.headers['cache-control']).toBe('public, max-age=0');
    expect(response.headers.vary).toBe('Accept, Authorization');
    // The same request answers the same tag.
    expect((await get({ query: titles }, ANONYMOUS)).headers.etag).toBe(response.headers.etag);
  });

  it('with Authorization: Cache-Control private, max-age=0', async () => {
    const response = await get({ query: titles });
    expectData(response, titlesData);
    expect(response.headers.etag).toMatch(STRONG_TAG);
    expect(response.headers['cache-control']).toBe('private, max-age=0');
    expect(response.headers.vary).toBe('Accept, Authorization');
  });

  it('If-None-Match with the ETag answers 304 with an empty body; another tag gets the 200', async () => {
    const first = await get({ query: titles }, ANONYMOUS);
    const tag = String(first.headers.etag);
    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
      const revalidated = await get({ query: titles }, { ...ANONYMOUS, 'if-none-match': header });
      expect(revalidated.statusCode, header).toBe(304);
      expect(revalidated.body).toBe('');
      expect(revalidated.headers.etag).toBe(tag);
      expect(revalidated.headers['cache-control']).toBe('public, max-age=0');
    }
    const stale = await get({ query: titles }, { ...ANONYMOUS, 'if-none-match': '"not-the-tag"' });
    expectData(stale, titlesData);
    expect(stale.headers.etag).toBe(tag);
  });

  it('a changed row changes the ETag: the old tag gets the new data, the new tag a 304', async () => {
    const id = await createPost('Before', '2');
    const query = `{ post(id: "${id}") { id title } }`;
    const before = await get({ query }, ANONYMOUS);
    expectData(before, { post: { id, title: 'Before' } });
    const oldTag = String(before.headers.etag);
    expect((await get({ query }, { ...ANONYMOUS, 'if-none-match': oldTag })).statusCode).toBe(304);

    await mutate('mutation($id: ID!) { updatePost(id: $id, input: {title: "After"}) { id } }', { id });

    const after = await get({ query }, { ...ANONYMOUS, 'if-none-match': oldTag });
    expectData(after, { post: { id, title: 'After' } });
    expect(after.headers.etag).toMatch(STRONG_TAG);
    expect(after.headers.etag).not.toBe(oldTag);
    expect((await get({ query }, { ...ANONYMOUS, 'if-none-match': String(after.headers.etag) })).statusCode).toBe(304);
  });

  it('a response with errors is Cache-Control: no-store, without an ETag (and If-None-Match does not 304 it)', async () => {
    const cases: [Row, Record<string, string>, number, string][] = [
      [{ query: '{ user(id: "999") { id } }' }, {}, 200, 'not-found'],
      [{ query: '{ users { id } }' }, ANONYMOUS, 200, 'authentication-required'],
      [{ query: '{ nope }' }, {}, 200, 'graphql-validation'],
      [{ query: '{ nope }' }, { accept: 'application/graphql-response+json' }, 400, 'graphql-validation'],
      [{ query: '{ users(first: 1000) { posts(first: 1000) { id } } }' }, {}, 200, 'query-too-complex'],
    ];
    for (const [params, headers, status, code] of cases) {
      const response = await get(params, { ...headers, 'if-none-match': '*' });
      const contentType = headers.accept === undefined ? JSON_TYPE : GRAPHQL_RESPONSE_TYPE;
      expectError(response, status, code, contentType);
      expect(response.headers['cache-control'], code).toBe('no-store');
      expect(response.headers.etag, code).toBeUndefined();
    }
  });

  it('a successful response is cacheable even when its data holds a JSON key named "errors"', async () => {
    const id = await createPost('Has errors key', '2', { tags: { errors: [] } });
    const response = await get({ query: `{ post(id: "${id}") { title tags } }` }, ANONYMOUS);
    expectData(response, { post: { title: 'Has errors key', tags: { errors: [] } } });
    expect(response.headers.etag).toMatch(STRONG_TAG);
    expect(response.headers['cache-control']).toBe('public, max-age=0');
  });

  it('a mutation over GET is refused with 405 and Allow: POST, and does not run', async () => {
    const before = await storedData();
    for (const query of ['mutation { createUser(input: {name: "via GET"}) { id } }', 'query Q { __typename } mutation M { deleteUser(id: "2") }']) {
      const params = query.includes('mutation M') ? { query, operationName: 'M' } : { query };
      const response = await get(params);
      expect(response.statusCode, describeResponse(response)).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.etag).toBeUndefined();
    }
    expect(await storedData()).toBe(before);
  });

  it('the 405 for a mutation over GET is a GraphQL error like every other: JSON with extensions.code', async () => {
    const response = await get({ query: 'mutation { createUser(input: {name: "via GET"}) { id } }' });
    expect(response.statusCode).toBe(405);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    expect(json(response)).toEqual({ errors: [{ message: expect.any(String) as unknown, extensions: { code: 'method-not-allowed', status: 405 } }] });
  });
});

// ---- 4. automatic persisted queries -------------------------------------------------------

describe('automatic persisted queries (Apollo protocol)', () => {
  const NOT_FOUND = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'persisted-query-not-found', status: 400 } }] };

  it('a hash the server does not know answers PersistedQueryNotFound, over POST and GET', async () => {
    const hash = sha256('query NeverSent { __typename }');
    const byPost = await post({ extensions: persisted(hash) });
    expect(byPost.statusCode, describeResponse(byPost)).toBe(200);
    expect(byPost.headers['content-type']).toBe(JSON_TYPE);
    expect(json(byPost)).toEqual(NOT_FOUND);

    const byGet = await get({ extensions: persisted(hash) }, ANONYMOUS);
    expect(byGet.statusCode).toBe(200);
    expect(json(byGet)).toEqual(NOT_FOUND);
    // A cache must not keep the miss: the next request registers the query.
    expect(byGet.headers['cache-control']).toBe('no-store');
    expect(byGet.headers.etag).toBeUndefined();

    const strict = await post({ extensions: persisted(hash) }, { accept: 'application/graphql-response+json' });
    expect(strict.statusCode).toBe(400);
    expect(strict.headers['content-type']).toBe(GRAPHQL_RESPONSE_TYPE);
    expect(json(strict)).toEqual(NOT_FOUND);
  });

  it('the query with its hash registers it; then the hash alone works over POST and GET, with variables', async () => {
    const query = 'query PostTitle($id: ID!) { post(id: $id) { id title } }';
    const hash = sha256(query);
    expect(json(await post({ extensions: persisted(hash), variables: { id: '1' } }))).toEqual(NOT_FOUND);

    expectData(await post({ query, variables: { id: '1' }, extensions: persisted(hash) }), { post: { id: '1', title: 'Hello' } });

    expectData(await post({ variables: { id: '2' }, extensions: persisted(hash) }, ANONYMOUS), { post: { id: '2', title: 'World' } });
    expectData(await post({ variables: { id: '3' }, operationName: 'PostTitle', extensions: persisted(hash) }), { post: { id: '3', title: 'Third' } });

    const byGet = await get({ variables: { id: '1' }, extensions: persisted(hash) }, ANONYMOUS);
    expectData(byGet, { post: { id: '1', title: 'Hello' } });
    expect(byGet.headers.etag).toMatch(STRONG_TAG);
    expect(byGet.headers['cache-control']).toBe('public, max-age=0');
    const revalidated = await get({ variables: { id: '1' }, extensions: persisted(hash) }, { ...ANONYMOUS, 'if-none-match': String(byGet.headers.etag) });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.body).toBe('');
    // Other variables, another answer and another tag.
    const other = await get({ variables: { id: '2' }, extensions: persisted(hash) }, ANONYMOUS);
    expectData(other, { post: { id: '2', title: 'World' } });
    expect(other.headers.etag).not.toBe(byGet.headers.etag);
  });

  it('a hash that does not match the query is refused, and registers nothing', async () => {
    const query = 'query Mismatch { posts(first: 1) { id } }';
    const otherHash = sha256('query SomethingElse { __typename }');
    const before = await storedData();
    const response = await post({ query, extensions: persisted(otherHash) });
    const error = expectRefused(response, 200, 'bad-request');
    expect(error.message).toContain('sha');
    expect(json(await post({ extensions: persisted(otherHash) }))).toEqual(NOT_FOUND);
    expect(json(await post({ extensions: persisted(sha256(query)) }))).toEqual(NOT_FOUND);
    expect(await storedData()).toBe(before);
  });

  it('a malformed persistedQuery is refused (no 5xx) and registers nothing', async () => {
    const query = 'query Malformed { products { sku } }';
    const hash = sha256(query);
    const malformed: [string, unknown][] = [
      ['version 2', { persistedQuery: { version: 2, sha256Hash: hash } }],
      ['version as a string', { persistedQuery: { version: '1', sha256Hash: hash } }],
      ['hash not hex', { persistedQuery: { version: 1, sha256Hash: 'z'.repeat(64) } }],
      ['hash too short', { persistedQuery: { version: 1, sha256Hash: hash.slice(0, 63) } }],
      ['hash a number', { persistedQuery: { version: 1, sha256Hash: 12345 } }],
      ['no hash', { persistedQuery: { version: 1 } }],
      ['persistedQuery a string', { persistedQuery: hash }],
      ['persistedQuery null', { persistedQuery: null }],
    ];
    for (const [name, extensions] of malformed) {
      for (const withQuery of [true, false]) {
        const response = await post({ ...(withQuery ? { query } : {}), extensions });
        const error = expectRefused(response, 200, 'bad-request');
        expect(error.message, name).toContain('persistedQuery');
        const byGet = await get({ ...(withQuery ? { query } : {}), extensions });
        expect(byGet.statusCode, `${name}: ${describeResponse(byGet)}`).toBe(200);
        expect(json<GraphqlBody>(byGet).errors?.[0]?.extensions.code, name).toBe('bad-request');
      }
    }
    expect(json(await post({ extensions: persisted(hash) }))).toEqual(NOT_FOUND);
  });

  it('a hash-only POST still needs Content-Type: application/json (415 otherwise), and the stored operation does not run', async () => {
    const query = 'mutation PersistedCreate { createUser(input: {name: "persisted-create"}) { name } }';
    const hash = sha256(query);
    expectData(await post({ query, extensions: persisted(hash) }), { createUser: { name: 'persisted-create' } });
    const before = await storedData();
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const response = await postRaw(JSON.stringify({ extensions: persisted(hash) }), contentType === undefined ? {} : { 'content-type': contentType });
      expect(response.statusCode, `${String(contentType)}: ${describeResponse(response)}`).toBe(415);
    }
    expect(await storedData()).toBe(before);
  });
});

// ---- 5. limits ----------------------------------------------------------------------------

describe('protection limits: refused before execution', () => {
  /** Refused with query-too-complex for this limit, without a single SQL statement. */
  async function expectOverLimit(body: Row, extensions: Row): Promise<void> {
    const { response, sql } = await withStatements(() => post(body));
    const error = expectRefused(response, 200, 'query-too-complex');
    expect(error.extensions).toEqual({ code: 'query-too-complex', status: 400, ...extensions });
    expect(json<GraphqlBody>(response).errors).toHaveLength(1);
    expect(sql).toEqual([]);
  }

  /** Runs, with data and SQL (so that "no SQL" above means something). */
  async function expectRuns(body: Row, data: Row, usesDatabase = true): Promise<void> {
    const { response, sql } = await withStatements(() => post(body));
    expectData(response, data);
    if (usesDatabase) expect(sql.length).toBeGreaterThan(0);
  }

  it('depth: 11 levels are refused (maxDepth 10); 10 run', async () => {
    await expectOverLimit({ query: nested(11).query }, { limit: 'maxDepth', actual: 11, max: 10 });
    // Fragments count where they are spread.
    const viaFragment =
      'fragment Deep on User { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { id } } } } } } } } } } ' +
      '{ users(first: 1) { ...Deep } }';
    await expectOverLimit({ query: viaFragment }, { limit: 'maxDepth', actual: 11, max: 10 });
    const ten = nested(10);
    await expectRuns({ query: ten.query }, ten.data);
  });

  it('cost: users(first: 1000) { posts(first: 1000) } is refused (maxCost 50000); exactly 50000 runs', async () => {
    await expectOverLimit({ query: '{ users(first: 1000) { posts(first: 1000) { id } } }' }, { limit: 'maxCost', actual: 1_001_000, max: 50_000, field: 'users.posts' });
    await expectOverLimit({ query: '{ users(first: 50) { posts(first: 1000) { id } } }' }, { limit: 'maxCost', actual: 50_050, max: 50_000, field: 'users.posts' });
    // Variables count with their values.
    const byVariable = 'query Cost($n: Int) { users(first: $n) { posts(first: 1000) { id } } }';
    await expectOverLimit({ query: byVariable, variables: { n: 50 } }, { limit: 'maxCost', actual: 50_050, max: 50_000, field: 'users.posts' });
    // Without first/last a top-level list counts the default page size (100) and a relation list 10;
    // a single object counts 1 per parent: users 100 + posts 100 × 10 + user 1,000 × 1 + posts 1,000 × 10
    // + user 10,000 × 1 + posts 10,000 × 10. The largest page on the way to the last posts is users'.
    await expectOverLimit({ query: '{ users { posts { user { posts { user { posts { id } } } } } } }' }, { limit: 'maxCost', actual: 122_100, max: 50_000, field: 'users' });

    // The seeded rows only (other tests add posts): Alice's 1 and 2, Bob's 3.
    const users = { users: [{ posts: [{ id: '1' }, { id: '2' }] }, { posts: [{ id: '3' }] }] };
    await expectRuns({ query: '{ users(first: 2) { posts(first: 999, filter: {id: {lte: "3"}}) { id } } }' }, users);
    const seededByVariable = 'query Cost($n: Int) { users(first: $n) { posts(first: 1000, filter: {id: {lte: "3"}}) { id } } }';
    await expectRuns({ query: seededByVariable, variables: { n: 2 } }, users);
    const exact = await withStatements(() => post({ query: '{ users(first: 50) { posts(first: 999) { id } } }' }));
    expect(exact.response.statusCode).toBe(200);
    expect(json<GraphqlBody>(exact.response).errors).toBeUndefined();
    expect(exact.sql.length).toBeGreaterThan(0);
  });

  it('aliases: 31 are refused (maxAliases 30); 30 run', async () => {
    await expectOverLimit({ query: `{ ${repeat(31, (i) => `a${i}: __typename`)} }` }, { limit: 'maxAliases', actual: 31, max: 30 });
    const thirty = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`a${i}`, 'Query']));
    await expectRuns({ query: `{ ${repeat(30, (i) => `a${i}: __typename`)} }` }, thirty, false);
  });

  it('directives: 51 are refused (maxDirectives 50); 50 run', async () => {
    await expectOverLimit({ query: `{ ${repeat(51, () => '__typename @include(if: true)')} }` }, { limit: 'maxDirectives', actual: 51, max: 50 });
    // Directives on fragment spreads and inside fragments count too.
    await expectOverLimit({ query: `{ ...F @include(if: true) } fragment F on Query { ${repeat(50, () => '__typename @skip(if: false)')} }` }, { limit: 'maxDirectives', actual: 51, max: 50 });
    await expectRuns({ query: `{ ${repeat(50, () => '__typename @include(if: true)')} }` }, { __typename: 'Query' }, false);
  });

  it('tokens: 5001 are refused while parsing (maxTokens 5000); exactly 5000 run', async () => {
    const document = (ones: number): string => `query Big($ids: [ID!] = [${repeat(ones, () => '1')}]) { posts(first: 1, filter: {id: {in: $ids}}) { id } }`;
    const base = tokenCount(document(0));
    const fits = document(5000 - base);
    expect(tokenCount(fits)).toBe(5000);
    const { response, sql } = await withStatements(() => post({ query: document(5001 - base), variables: { ids: ['1'] } }));
    const error = expectRefused(response, 200, 'query-too-complex');
    expect(error.extensions).toMatchObject({ code: 'query-too-complex', status: 400, limit: 'maxTokens', max: 5000 });
    expect(sql).toEqual([]);
    await expectRuns({ query: fits, variables: { ids: ['1'] } }, { posts: [{ id: '1' }] });
  });

  it('a syntax error is graphql-syntax, not a token limit, even when it quotes the word "tokens"', async () => {
    for (const query of ['{ __typename } tokens', '{ posts { id } } { tokens']) {
      const error = expectRefused(await post({ query }), 200, 'graphql-syntax');
      expect(error.message).toMatch(/^Syntax Error: /);
      expect(error.extensions).toEqual({ code: 'graphql-syntax', status: 400 });
    }
  });

  it('over a limit with Accept: application/graphql-response+json is a 400', async () => {
    const response = await post({ query: nested(11).query }, { accept: 'application/graphql-response+json' });
    expectRefused(response, 400, 'query-too-complex', GRAPHQL_RESPONSE_TYPE);
  });

  it('introspection is on by default', async () => {
    expectData(await post({ query: '{ __schema { queryType { name } mutationType { name } } }' }, ANONYMOUS), {
      __schema: { queryType: { name: 'Query' }, mutationType: { name: 'Mutation' } },
    });
    expectData(await post({ query: '{ __type(name: "User") { name kind } }' }), { __type: { name: 'User', kind: 'OBJECT' } });
  });
});

describe('limits and caching follow the graphql options', () => {
  let custom: TestApp;
  beforeAll(async () => {
    custom = await startTestApp({ graphql: { maxDepth: 3, maxCost: 10, maxAliases: 1, maxDirectives: 1, maxTokens: 30, introspection: false, getMaxAgeSeconds: 60 } });
    const created = await custom.app.inject({ method: 'POST', url: '/users', payload: { name: 'Only' } });
    expect(created.statusCode).toBe(201);
    const createdPost = await custom.app.inject({ method: 'POST', url: '/posts', payload: { title: 'Only post', userId: 1 } });
    expect(createdPost.statusCode).toBe(201);
  });
  afterAll(async () => custom.close());

  async function send(query: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return custom.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify({ query }) });
  }

  function expectLimit(response: LightMyRequestResponse, extensions: Row): void {
    const error = expectRefused(response, 200, 'query-too-complex');
    if (extensions.limit === 'maxTokens') expect(error.extensions).toMatchObject({ code: 'query-too-complex', status: 400, ...extensions });
    else expect(error.extensions).toEqual({ code: 'query-too-complex', status: 400, ...extensions });
  }

  it('maxDepth', async () => {
    expectData(await send(nested(3).query), nested(3).data);
    expectLimit(await send(nested(4).query), { limit: 'maxDepth', actual: 4, max: 3 });
  });

  it('maxCost (a list without first counts the default page size)', async () => {
    expectData(await send('{ users(first: 10) { name } }'), { users: [{ name: 'Only' }] });
    expectLimit(await send('{ users(first: 11) { name } }'), { limit: 'maxCost', actual: 11, max: 10, field: 'users' });
    expectLimit(await send('{ users { name } }'), { limit: 'maxCost', actual: 100, max: 10, field: 'users' });
  });

  it('maxCost: a connection costs its page size; its nodes are those same rows, not counted again', async () => {
    // users(first: 6) costs 6; usersConnection(first: 6) { nodes } returns the same 6 users.
    expectData(await send('{ users(first: 6) { name } }'), { users: [{ name: 'Only' }] });
    expectData(await send('{ usersConnection(first: 6) { nodes { name } } }'), { usersConnection: { nodes: [{ name: 'Only' }] } });
  });

  it('maxAliases and maxDirectives', async () => {
    expectData(await send('{ a: __typename }'), { a: 'Query' });
    expectLimit(await send('{ a: __typename b: __typename }'), { limit: 'maxAliases', actual: 2, max: 1 });
    expectData(await send('{ __typename @include(if: true) }'), { __typename: 'Query' });
    expectLimit(await send('{ __typename @include(if: true) __typename @skip(if: false) }'), { limit: 'maxDirectives', actual: 2, max: 1 });
  });

  it('maxTokens', async () => {
    expectData(await send(`{ ${repeat(28, () => '__typename')} }`), { __typename: 'Query' });
    expectLimit(await send(`{ ${repeat(29, () => '__typename')} }`), { limit: 'maxTokens', max: 30 });
  });

  it('introspection: false refuses __schema and __type with graphql-validation; other queries work', async () => {
    for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "User") { name } }', '{ users(first: 1) { name } __schema { types { name } } }']) {
      const error = expectRefused(await send(query), 200, 'graphql-validation');
      expect(error.message).toContain('introspection');
    }
    expectRefused(await send('{ __schema { queryType { name } } }', { accept: 'application/graphql-response+json' }), 400, 'graphql-validation', GRAPHQL_RESPONSE_TYPE);
    expectData(await send('{ __typename users(first: 1) { name } }'), { __typename: 'Query', users: [{ name: 'Only' }] });
  });

  it('getMaxAgeSeconds sets the max-age of cacheable GETs', async () => {
    const anonymous = await get({ query: '{ posts(first: 1) { title } }' }, ANONYMOUS, custom);
    expectData(anonymous, { posts: [{ title: 'Only post' }] });
    expect(anonymous.headers['cache-control']).toBe('public, max-age=60');
    const withToken = await get({ query: '{ posts(first: 1) { title } }' }, {}, custom);
    expect(withToken.headers['cache-control']).toBe('private, max-age=60');
  });
});

// ---- 6. GraphiQL and the SDL --------------------------------------------------------------

describe('GraphiQL and the SDL', () => {
  const ASSETS: [file: string, contentType: string][] = [
    ['graphiql.min.js', 'text/javascript; charset=utf-8'],
    ['graphiql.min.css', 'text/css; charset=utf-8'],
    ['react.production.min.js', 'text/javascript; charset=utf-8'],
    ['react-dom.production.min.js', 'text/javascript; charset=utf-8'],
    ['start.js', 'text/javascript; charset=utf-8'],
  ];

  it('a browser opening /graphql gets GraphiQL with a strict Content-Security-Policy', async () => {
    for (const headers of [{ accept: BROWSER_ACCEPT }, { accept: 'text/html', ...ANONYMOUS }]) {
      const response = await t.app.inject({ method: 'GET', url: '/graphql', headers });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('GraphiQL');
      expect(response.body).toMatch(/^<!doctype html>/i);
      const csp = String(response.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('unsafe-eval');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('the page loads only our own assets (no CDN), each of them served', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: BROWSER_ACCEPT } });
    const referenced = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).sort();
    // The icon is the server's own (test/favicon.test.ts).
    expect(referenced).toEqual(['/favicon.ico', ...ASSETS.map(([file]) => `/graphql/assets/${file}`)].sort());
  });

  it('every asset: 200 with its content type and an ETag; 304 on If-None-Match', async () => {
    for (const [file, contentType] of ASSETS) {
      const url = `/graphql/assets/${file}`;
      const response = await t.app.inject({ method: 'GET', url, headers: ANONYMOUS });
      expect(response.statusCode, file).toBe(200);
      expect(response.headers['content-type'], file).toBe(contentType);
      expect(response.headers.etag, file).toMatch(STRONG_TAG);
      expect(response.headers['cache-control'], file).toBe('public, max-age=86400');
      expect(response.body.length, file).toBeGreaterThan(file === 'start.js' ? 100 : 10_000);
      const again = await t.app.inject({ method: 'GET', url, headers: { ...ANONYMOUS, 'if-none-match': String(response.headers.etag) } });
      expect(again.statusCode, file).toBe(304);
      expect(again.body, file).toBe('');
      expect(again.headers.etag, file).toBe(response.headers.etag);
    }
    const start = await t.app.inject({ method: 'GET', url: '/graphql/assets/start.js' });
    expect(start.body).toContain("'/graphql'");
    expect(start.body).toContain('GraphiQL.createFetcher');
  });

  it('an unknown asset is a 404 GraphQL-shaped error', async () => {
    for (const file of ['nope.js', 'graphiql.js', '__proto__', 'constructor', 'hasOwnProperty', '..%2F..%2Fpackage.json', '%2E%2E%2Fgraphql-routes.ts']) {
      const response = await t.app.inject({ method: 'GET', url: `/graphql/assets/${file}` });
      expect(response.statusCode, file).toBe(404);
      expect(response.headers['content-type'], file).toBe(JSON_TYPE);
      expect(json(response), file).toEqual({ errors: [{ message: 'No such GraphiQL asset.', extensions: { code: 'not-found', status: 404 } }] });
    }
  });

  it('/graphql/schema.graphql is SDL that buildSchema accepts, with the generated types and fields', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql', headers: ANONYMOUS });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    const sdl = response.body;
    expect(sdl).toContain('type User');
    expect(sdl).toContain('createUser(');
    expect(sdl).toContain('usersConnection(');
    const schema = buildSchema(sdl);
    for (const name of ['User', 'Post', 'Product', 'Order', 'UserConnection', 'UserFilter', 'UserSort', 'UserCreateInput', 'PageInfo', 'DateTime', 'JSON']) {
      expect(schema.getType(name), name).toBeDefined();
    }
    expect(Object.keys(schema.getQueryType()?.getFields() ?? {})).toEqual(expect.arrayContaining(['user', 'users', 'usersConnection', 'post', 'posts', 'orders']));
    expect(Object.keys(schema.getMutationType()?.getFields() ?? {})).toEqual(expect.arrayContaining(['createUser', 'updateUser', 'replaceUser', 'deleteUser']));
  });
});

// ---- 7. bad input, and Accept -------------------------------------------------------------

describe('bad input never produces a 5xx nor changes data', () => {
  interface RefusedCase {
    name: string;
    request: InjectOptions;
    status: number;
    code: string;
  }
  const JSON_HEADERS = { 'content-type': 'application/json' };
  const refused: RefusedCase[] = [
    { name: 'malformed JSON', request: { headers: JSON_HEADERS, payload: '{"query": ' }, status: 400, code: 'malformed-json' },
    { name: 'empty body', request: { headers: JSON_HEADERS, payload: '' }, status: 400, code: 'malformed-json' },
    { name: 'a JSON array (batched operations)', request: { headers: JSON_HEADERS, payload: '[{"query": "{ __typename }"}]' }, status: 400, code: 'bad-request' },
    { name: 'a JSON number', request: { headers: JSON_HEADERS, payload: '42' }, status: 400, code: 'bad-request' },
    { name: 'a JSON string', request: { headers: JSON_HEADERS, payload: '"{ __typename }"' }, status: 400, code: 'bad-request' },
    { name: 'JSON null', request: { headers: JSON_HEADERS, payload: 'null' }, status: 400, code: 'bad-request' },
    { name: 'no query', request: { headers: JSON_HEADERS, payload: '{"variables": {}}' }, status: 400, code: 'bad-request' },
    { name: 'query a number', request: { headers: JSON_HEADERS, payload: '{"query": 42}' }, status: 400, code: 'bad-request' },
    { name: 'query an object', request: { headers: JSON_HEADERS, payload: '{"query": {"kind": "Document"}}' }, status: 400, code: 'bad-request' },
    { name: 'variables a string', request: { headers: JSON_HEADERS, payload: '{"query": "{ __typename }", "variables": "{}"}' }, status: 400, code: 'bad-request' },
    { name: 'variables an array', request: { headers: JSON_HEADERS, payload: '{"query": "{ __typename }", "variables": []}' }, status: 400, code: 'bad-request' },
    { name: 'operationName a number', request: { headers: JSON_HEADERS, payload: '{"query": "{ __typename }", "operationName": 1}' }, status: 400, code: 'bad-request' },
    { name: 'extensions a string', request: { headers: JSON_HEADERS, payload: '{"query": "{ __typename }", "extensions": "x"}' }, status: 400, code: 'bad-request' },
    { name: 'Content-Type text/plain', request: { headers: { 'content-type': 'text/plain' }, payload: '{"query": "{ __typename }"}' }, status: 415, code: 'unsupported-media-type' },
    { name: 'Content-Type application/graphql', request: { headers: { 'content-type': 'application/graphql' }, payload: '{ __typename }' }, status: 415, code: 'unsupported-media-type' },
    { name: 'no Content-Type', request: { payload: '{"query": "{ __typename }"}' }, status: 415, code: 'unsupported-media-type' },
    { name: 'a body over bodyLimitBytes', request: { headers: JSON_HEADERS, payload: JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(BODY_LIMIT) }) }, status: 413, code: 'payload-too-large' },
    { name: 'Accept nothing JSON', request: { headers: { ...JSON_HEADERS, accept: 'text/csv' }, payload: '{"query": "{ __typename }"}' }, status: 406, code: 'not-acceptable' },
    { name: 'an invalid token', request: { headers: { ...JSON_HEADERS, authorization: 'Bearer not-a-token' }, payload: '{"query": "{ __typename }"}' }, status: 401, code: 'invalid-token' },
  ];

  for (const c of refused) {
    it(`${c.name}: ${String(c.status)} ${c.code}`, async () => {
      const before = await storedData();
      const response = await t.app.inject({ method: 'POST', url: '/graphql', ...c.request });
      const error = expectRefused(response, c.status, c.code);
      expect(error.extensions.status).toBe(c.status);
      expect(await storedData()).toBe(before);
    });
  }

  it('a 415 says what to send: application/json with UTF-8, or a query by GET; it names the Content-Type received', async () => {
    const cases: { headers: Record<string, string>; received: string }[] = [
      { headers: {}, received: 'this request has no Content-Type' },
      { headers: { 'content-type': 'text/plain' }, received: 'this request has Content-Type: text/plain' },
      { headers: { 'content-type': 'application/json; charset=latin1' }, received: 'this request has Content-Type: application/json; charset=latin1' },
    ];
    for (const c of cases) {
      const error = expectRefused(await postRaw('{"query": "{ __typename }"}', c.headers), 415, 'unsupported-media-type');
      expect(error.message).toBe(
        `POST /graphql takes a JSON body {"query", "variables"?, "operationName"?, "extensions"?} with Content-Type: application/json (UTF-8, the default charset); ${c.received}. ` +
          'Queries can also go by GET /graphql?query=…, subscriptions by WebSocket on /graphql or Server-Sent Events on /graphql/stream.',
      );
    }
  });

  it('a 406 says which response types /graphql offers, and names the Accept header received', async () => {
    const error = expectRefused(await post({ query: '{ __typename }' }, { accept: 'text/csv' }), 406, 'not-acceptable');
    expect(error.message).toBe('/graphql answers with application/graphql-response+json or application/json (UTF-8); the Accept header (text/csv) rules both out.');
  });

  interface InvalidCase {
    name: string;
    body: Row;
    code: string;
    message?: string | RegExp;
  }
  const invalid: InvalidCase[] = [
    { name: 'variables of the wrong type', body: { query: 'query($id: ID!) { user(id: $id) { id } }', variables: { id: { a: 1 } } }, code: 'graphql-validation', message: /^Variable "\$id" got invalid value/ },
    { name: 'a required variable missing', body: { query: 'query($id: ID!) { user(id: $id) { id } }', variables: {} }, code: 'graphql-validation', message: /\$id/ },
    { name: 'an unknown field', body: { query: '{ nope }' }, code: 'graphql-validation', message: 'Cannot query field "nope" on type "Query".' },
    { name: 'an unknown argument', body: { query: '{ users(limit: 5) { id } }' }, code: 'graphql-validation', message: /^Unknown argument "limit" on field "Query\.users"\./ },
    { name: 'a mutation field in a query', body: { query: '{ createUser(input: {name: "x"}) { id } }' }, code: 'graphql-validation' },
    { name: 'a syntax error', body: { query: '{ users { ' }, code: 'graphql-syntax', message: 'Syntax Error: Expected Name, found <EOF>.' },
    { name: 'an empty document', body: { query: '' }, code: 'graphql-syntax' },
    { name: 'two operations without operationName', body: { query: 'query A { __typename } query B { __typename }' }, code: 'graphql-validation', message: 'The document has several operations; say which with operationName.' },
    { name: 'an unknown operationName', body: { query: 'query A { __typename }', operationName: 'B' }, code: 'graphql-validation', message: 'The document has no operation named B.' },
    { name: 'a subscription', body: { query: 'subscription { userCreated { id } }' }, code: 'graphql-validation' },
  ];

  for (const c of invalid) {
    it(`${c.name}: ${c.code}, 200 with application/json and 400 with application/graphql-response+json`, async () => {
      const before = await storedData();
      const loose = expectRefused(await post(c.body), 200, c.code);
      expect(loose.extensions).toEqual({ code: c.code, status: 400 });
      if (typeof c.message === 'string') expect(loose.message).toBe(c.message);
      else if (c.message !== undefined) expect(loose.message).toMatch(c.message);
      expectRefused(await post(c.body, { accept: 'application/graphql-response+json' }), 400, c.code, GRAPHQL_RESPONSE_TYPE);
      expect(await storedData()).toBe(before);
    });
  }

  it('a syntax error gives its location', async () => {
    const error = expectRefused(await post({ query: '{ users { ' }), 200, 'graphql-syntax');
    expect(error.locations).toEqual([{ line: 1, column: 11 }]);
  });

  it('operationName picks one of several operations', async () => {
    expectData(await post({ query: 'query A { a: __typename } query B { b: __typename }', operationName: 'B' }), { b: 'Query' });
    const byGet = await get({ query: 'query A { a: __typename } query B { b: __typename }', operationName: 'A' });
    expectData(byGet, { a: 'Query' });
  });

  it('bad list arguments are invalid-query from the core (executed, the field null)', async () => {
    for (const query of ['{ users(first: 1001) { id } }', '{ users(first: -1) { id } }', '{ users(after: "not-a-cursor") { id } }', '{ users(first: 1, last: 1) { id } }']) {
      const response = await post({ query });
      const error = expectError(response, 200, 'invalid-query');
      expect(error.extensions.status, query).toBe(400);
      expect(json<GraphqlBody>(response).data, query).toEqual({ users: null });
    }
  });

  it('OPTIONS /graphql answers 204 with Allow', async () => {
    const response = await t.app.inject({ method: 'OPTIONS', url: '/graphql' });
    expect(response.statusCode).toBe(204);
    expect(response.headers.allow).toBe(ALLOW);
    expect(response.body).toBe('');
  });

  it('PUT, PATCH and DELETE /graphql answer 405 with Allow: GET, POST, OPTIONS', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const response = await t.app.inject({ method, url: '/graphql', headers: JSON_HEADERS, payload: '{"query": "mutation { deleteUser(id: \\"2\\") }"}' });
      expect(response.headers.allow, method).toBe(ALLOW);
      expectRefused(response, 405, 'method-not-allowed');
    }
    expectData(await post({ query: '{ user(id: "2") { name } }' }), { user: { name: 'Bob' } });
  });
});

describe('Accept decides the media type and the status of refused requests', () => {
  it('application/graphql-response+json: that content type; 200 when executed, 400 when refused', async () => {
    const accept = { accept: 'application/graphql-response+json' };
    expectData(await post({ query: '{ __typename }' }, accept), { __typename: 'Query' }, GRAPHQL_RESPONSE_TYPE);
    expectRefused(await post({ query: '{ nope }' }, accept), 400, 'graphql-validation', GRAPHQL_RESPONSE_TYPE);
    expectRefused(await post({ query: '{' }, accept), 400, 'graphql-syntax', GRAPHQL_RESPONSE_TYPE);
    // Executed with a field error: 200, data next to the errors.
    const executed = await post({ query: '{ user(id: "999") { id } }' }, accept);
    expectError(executed, 200, 'not-found', GRAPHQL_RESPONSE_TYPE);
    expect(json<GraphqlBody>(executed).data).toEqual({ user: null });
    // Preferred over application/json when both are accepted.
    expectData(await post({ query: '{ __typename }' }, { accept: 'application/graphql-response+json, application/json' }), { __typename: 'Query' }, GRAPHQL_RESPONSE_TYPE);
  });

  it('application/json, */* or no Accept: application/json, and 200 with the errors', async () => {
    const variants: Record<string, string>[] = [{ accept: 'application/json' }, { accept: '*/*' }, {}];
    for (const headers of variants) {
      expectData(await post({ query: '{ __typename }' }, headers), { __typename: 'Query' });
      expectRefused(await post({ query: '{ nope }' }, headers), 200, 'graphql-validation');
      expectRefused(await post({ query: '{' }, headers), 200, 'graphql-syntax');
    }
  });
});

// ---- property: random requests ------------------------------------------------------------

const anyText = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 15 }), fc.string({ unit: 'binary', maxLength: 15 }));
const READ_WORDS = [
  '{', '}', '(', ')', ':', '$', '...', '@', '!', '[', ']', '=', ',', 'query', 'fragment', 'on', 'users', 'user', 'posts', 'post', 'products',
  'orders', 'usersConnection', 'postsConnection', 'edges', 'node', 'nodes', 'cursor', 'pageInfo', 'hasNextPage', 'endCursor', 'totalCount', 'id',
  'name', 'title', 'tags', 'price', 'sku', 'first', 'last', 'after', 'before', 'filter', 'sort', 'eq', 'in', 'contains', 'startsWith', 'isNull',
  'NAME_ASC', 'ID_DESC', '__typename', '__schema', '__type', 'types', 'include', 'skip', 'if', 'true', 'false', 'null', '0', '1', '-1', '1000',
  '99999999999999999999', '1.5', '"1"', '"x"', '""', '"""block"""', '$id', '$n', 'ID', 'Int', 'String', 'UserFilter', 'User', 'Query', '#c\n',
];
const WRITE_WORDS = ['mutation', 'createUser', 'updateUser', 'replaceUser', 'deleteUser', 'createPost', 'deletePost', 'updateProduct', 'createOrder', 'input'];

/** Documents: token soup, a small grammar of plausible queries (often valid), or any text. */
function documentText(words: string[], allowMutations: boolean): fc.Arbitrary<string> {
  const soup = fc.array(fc.constantFrom(...words), { maxLength: 25 }).map((parts) => parts.join(' '));
  const args = fc
    .array(
      fc.oneof(
        fc.integer({ min: -2, max: 1100 }).map((n) => `first: ${n}`),
        fc.integer({ min: -2, max: 1100 }).map((n) => `last: ${n}`),
        anyText.map((s) => `after: ${JSON.stringify(s)}`),
        fc.constantFrom('sort: [ID_DESC]', 'sort: [NAME_ASC]', 'filter: {id: {in: ["1", "2"]}}', 'filter: {name: {startsWith: "A"}}', 'first: $n', 'filter: {id: {eq: $id}}'),
      ),
      { maxLength: 3 },
    )
    .map((list) => (list.length === 0 ? '' : `(${list.join(', ')})`));
  const selection = fc.subarray(['id', 'name', 'title', '__typename', 'posts { id title }', 'user { name }', 'nodes { id }', 'totalCount', 'edges { cursor }', 'pageInfo { hasNextPage endCursor }'], { minLength: 1 });
  const field = fc.constantFrom('users', 'posts', 'products', 'orders', 'usersConnection', 'postsConnection', 'user(id: "1")', 'post(id: $id)');
  const operation = fc.constantFrom('', 'query ', 'query Q($n: Int, $id: ID) ', 'query Q($n: Int, $id: ID!) ', ...(allowMutations ? ['mutation '] : []));
  const grammar = fc.tuple(operation, field, args, selection).map(([op, f, a, s]) => `${op}{ ${f}${a} { ${s.join(' ')} } }`);
  const writes = allowMutations
    ? [fc.constantFrom('mutation { deleteUser(id: "1") }', 'mutation { createUser(input: {name: "anonymous"}) { id } }', 'mutation { updatePost(id: "1", input: {title: "x"}) { id } }', 'mutation($id: ID!) { deletePost(id: $id) }')]
    : [];
  return fc.oneof({ weight: 3, arbitrary: soup }, { weight: 4, arbitrary: grammar }, { weight: 2, arbitrary: anyText }, ...writes.map((arbitrary) => ({ weight: 1, arbitrary })));
}

const variablesValue = fc.oneof(
  fc.constant(undefined),
  fc.record({ n: fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.jsonValue({ maxDepth: 1 })), id: fc.oneof(fc.constantFrom('1', '2', '999', ''), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 2 }),
);
const extensionsValue = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  {
    weight: 2,
    arbitrary: fc.record({ persistedQuery: fc.record({ version: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 0 })), sha256Hash: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), anyText) }, { requiredKeys: [] }) }),
  },
);

function checkAnswer(response: LightMyRequestResponse): void {
  expect(response.statusCode, describeResponse(response)).toBeLessThan(500);
  expect(response.headers['content-type'], describeResponse(response)).toMatch(/^application\/(graphql-response\+)?json; charset=utf-8$/);
  const body = json<GraphqlBody>(response);
  expect(body.data !== undefined || body.errors !== undefined, describeResponse(response)).toBe(true);
  for (const error of body.errors ?? []) {
    expect(typeof error.message).toBe('string');
    expect(typeof error.extensions.code, describeResponse(response)).toBe('string');
  }
}

describe('random requests (fast-check)', () => {
  it('random POST bodies never answer 5xx and never change stored data (anonymous may try writes; admin only reads)', async () => {
    const before = await storedData();
    const request = fc.boolean().chain((asAdmin) =>
      fc.record({
        asAdmin: fc.constant(asAdmin),
        text: fc.oneof(
          {
            weight: 8,
            arbitrary: fc
              .record(
                { query: documentText(asAdmin ? READ_WORDS : [...READ_WORDS, ...WRITE_WORDS], !asAdmin), variables: variablesValue, operationName: fc.oneof(fc.constantFrom('Q', 'A'), anyText), extensions: extensionsValue },
                { requiredKeys: ['query'] },
              )
              .map((body) => JSON.stringify(body)),
          },
          { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)) },
          { weight: 1, arbitrary: anyText },
        ),
        contentType: fc.oneof({ weight: 10, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/graphql', 'application/json; charset=latin1') }),
        accept: fc.constantFrom(undefined, 'application/json', 'application/graphql-response+json', '*/*', 'text/csv'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(request, async ({ asAdmin, text, contentType, accept }) => {
        const headers: Record<string, string> = { 'content-type': contentType, ...(asAdmin ? {} : ANONYMOUS), ...(accept === undefined ? {} : { accept }) };
        checkAnswer(await postRaw(text, headers));
        expect(await storedData()).toBe(before);
      }),
      { numRuns: 300 },
    );
  });

  it('random GET query strings never answer 5xx and never change stored data', async () => {
    const before = await storedData();
    const params = fc.record(
      {
        query: fc.oneof({ weight: 6, arbitrary: documentText(READ_WORDS, false) }, { weight: 1, arbitrary: anyText }),
        variables: fc.oneof(variablesValue.map((v) => (v === undefined ? '' : JSON.stringify(v))), anyText),
        operationName: fc.oneof(fc.constantFrom('Q', 'A'), anyText),
        extensions: fc.oneof(extensionsValue.map((v) => (v === undefined ? '' : JSON.stringify(v))), anyText),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(params, fc.boolean(), async (values, asAdmin) => {
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(values)) search.set(name, value);
        const response = await t.app.inject({ method: 'GET', url: `/graphql?${search.toString()}`, headers: asAdmin ? {} : ANONYMOUS });
        checkAnswer(response);
        expect(await storedData()).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
