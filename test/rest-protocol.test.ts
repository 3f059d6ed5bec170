import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { PACKAGE_VERSION } from '../src/package-version.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * HTTP protocol behaviour through app.inject(): entity tags and conditional requests (RFC 9110),
 * Idempotency-Key, HEAD and OPTIONS, CORS, request ids and logs, and the system routes.
 */

type Row = Record<string, unknown>;

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
/** A strong entity tag: no W/, only RFC 9110's etagc inside the quotes. */
const STRONG_TAG = /^"[\x21\x23-\x7e]+"$/;
/** A random UUID: version 4, variant 10 (RFC 9562, section 5.4). */
const RANDOM_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestApp;

async function send(method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  if (body === undefined) return t.app.inject({ method, url, headers });
  return t.app.inject({ method, url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

async function create(resource: string, body: Row): Promise<{ row: Row; etag: string }> {
  const response = await send('POST', `/${resource}`, body);
  expect(response.statusCode, response.body).toBe(201);
  return { row: json<Row>(response), etag: String(response.headers.etag) };
}

function expectProblem(response: LightMyRequestResponse, status: number, code: string): Row {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  const body = json<Row>(response);
  expect(body).toMatchObject({ type: `urn:restgraph:problem:${code}`, status, code });
  return body;
}

async function countUsersNamed(name: string): Promise<number> {
  const response = await send('GET', `/users?name=${encodeURIComponent(name)}&count=true`);
  return Number(response.headers['x-total-count']);
}

/** Changes a stored idempotency key row through a second connection to the app's database. */
async function setIdempotencyKey(key: string, values: { state: string; createdAt: string }): Promise<void> {
  expect(await t.db.run('update "_restgraph_idempotency_keys" set "state" = ?, "createdAt" = ? where "key" = ?', [values.state, values.createdAt, key])).toBe(1);
}

beforeAll(async () => {
  t = await startTestApp();
  await create('users', { name: 'Owner', email: 'owner@example.com' });
});
afterAll(async () => t.close());

describe('ETag', () => {
  it('every single-object response has a strong ETag that names its exact representation', async () => {
    const created = await send('POST', '/users', { name: 'Tagged' });
    const createdTag = created.headers.etag;
    expect(createdTag).toMatch(STRONG_TAG);
    const url = String(created.headers.location);

    const read = await send('GET', url);
    expect(read.headers.etag).toBe(createdTag);
    expect(read.body).toBe(created.body);

    const patched = await send('PATCH', url, { bio: 'changed' });
    expect(patched.statusCode).toBe(200);
    expect(patched.headers.etag).toMatch(STRONG_TAG);
    expect(patched.headers.etag).not.toBe(createdTag);
    expect((await send('GET', url)).headers.etag).toBe(patched.headers.etag);

    const replaced = await send('PUT', url, { name: 'Tagged again' });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.headers.etag).toMatch(STRONG_TAG);
    expect(replaced.headers.etag).not.toBe(patched.headers.etag);
    expect((await send('GET', url)).headers.etag).toBe(replaced.headers.etag);
  });

  it('a projection or an embed is another representation with another tag', async () => {
    const full = await send('GET', '/users/1');
    const projected = await send('GET', '/users/1?fields=name');
    const embedded = await send('GET', '/users/1?include=posts');
    expect(projected.headers.etag).toMatch(STRONG_TAG);
    expect(embedded.headers.etag).toMatch(STRONG_TAG);
    expect(new Set([full.headers.etag, projected.headers.etag, embedded.headers.etag]).size).toBe(3);
  });

  it('every write to a row gives it a new tag and a later updatedAt, also when writes come faster than the clock', async () => {
    const { row } = await create('users', { name: 'Rapid' });
    const url = `/users/${String(row.id)}`;
    const tags = new Set<string>();
    const times: number[] = [];
    // Many writes per millisecond: each still moves updatedAt forward.
    for (let i = 0; i < 20; i++) {
      const patched = await send('PATCH', url, { bio: `bio-${String(i).padStart(2, '0')}` });
      expect(patched.statusCode).toBe(200);
      tags.add(String(patched.headers.etag));
      times.push(Date.parse(String(json<Row>(patched).updatedAt)));
    }
    expect(tags.size).toBe(20);
    expect(times.every((time, i) => i === 0 || time > (times[i - 1] ?? Infinity))).toBe(true);
    expect((await send('GET', url)).headers.etag).toBe([...tags].at(-1));
  });

  it('a write moves updatedAt past a stored one that lies ahead of the clock', async () => {
    const { row, etag } = await create('users', { name: 'Ahead' });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await t.db.run('update "users" set "updatedAt" = ? where "id" = ?', [future, row.id])).toBe(1);
    const before = await send('GET', `/users/${String(row.id)}`);
    expect(before.headers.etag).not.toBe(etag);
    const patched = await send('PATCH', `/users/${String(row.id)}`, { name: 'Ahend' });
    expect(json<Row>(patched).updatedAt).toBe(new Date(Date.parse(future) + 1).toISOString());
    expect(patched.headers.etag).toMatch(STRONG_TAG);
    expect(patched.headers.etag).not.toBe(before.headers.etag);
  });

  it('a row another tool changed, keeping its length and updatedAt, gets a new tag; 304 and If-Match follow it', async () => {
    const { row, etag } = await create('users', { name: 'Ann' });
    const url = `/users/${String(row.id)}`;
    expect(await t.db.run('update "users" set "name" = ? where "id" = ?', ['Bob', row.id])).toBe(1);
    const changed = await send('GET', url);
    expect(json<Row>(changed)).toEqual({ ...row, name: 'Bob' });
    expect(changed.headers.etag).toMatch(STRONG_TAG);
    expect(changed.headers.etag).not.toBe(etag);
    expect((await send('GET', url, undefined, { 'if-none-match': String(changed.headers.etag) })).statusCode).toBe(304);
    expect((await send('PATCH', url, { bio: 'x' }, { 'if-match': etag })).statusCode).toBe(412);
    expect((await send('PATCH', url, { bio: 'x' }, { 'if-match': String(changed.headers.etag) })).statusCode).toBe(200);
  });

  it('the versioned and unversioned paths share the tag of the same object', async () => {
    expect((await send('GET', '/v1/users/1')).headers.etag).toBe((await send('GET', '/users/1')).headers.etag);
  });

  it('lists and deletes carry no ETag', async () => {
    expect((await send('GET', '/users')).headers.etag).toBeUndefined();
    const { row } = await create('users', { name: 'Doomed' });
    expect((await send('DELETE', `/users/${String(row.id)}`)).headers.etag).toBeUndefined();
  });
});

describe('If-None-Match', () => {
  let url: string;
  let etag: string;
  beforeAll(async () => {
    const { row, etag: tag } = await create('users', { name: 'Cached' });
    url = `/users/${String(row.id)}`;
    etag = tag;
  });

  const matching: [string, (tag: string) => string][] = [
    ['the current tag', (tag) => tag],
    ['the weak form W/ of the current tag', (tag) => `W/${tag}`],
    ['*', () => '*'],
    ['a list containing the current tag', (tag) => `"other", ${tag}`],
  ];
  for (const [what, header] of matching) {
    it(`${what} -> 304 with no body and the ETag`, async () => {
      const response = await send('GET', url, undefined, { 'if-none-match': header(etag) });
      expect(response.statusCode).toBe(304);
      expect(response.body).toBe('');
      expect(response.headers.etag).toBe(etag);
    });
  }

  it('a stale tag -> 200 with the body', async () => {
    const response = await send('GET', url, undefined, { 'if-none-match': '"stale"' });
    expect(response.statusCode).toBe(200);
    expect(json<Row>(response).name).toBe('Cached');
  });

  it('after a change the old tag no longer matches', async () => {
    const { row, etag: old } = await create('users', { name: 'Changing' });
    await send('PATCH', `/users/${String(row.id)}`, { name: 'Changed' });
    const response = await send('GET', `/users/${String(row.id)}`, undefined, { 'if-none-match': old });
    expect(response.statusCode).toBe(200);
    expect(json<Row>(response).name).toBe('Changed');
  });

  it('HEAD honours it too', async () => {
    const response = await send('HEAD', url, undefined, { 'if-none-match': etag });
    expect(response.statusCode).toBe(304);
    expect(response.body).toBe('');
  });
});

describe('If-Match', () => {
  const writes: [string, InjectOptions['method'], unknown, number][] = [
    ['PUT', 'PUT', { name: 'Put' }, 200],
    ['PATCH', 'PATCH', { name: 'Patched' }, 200],
    ['DELETE', 'DELETE', undefined, 204],
  ];
  for (const [name, method, body, success] of writes) {
    it(`${name} with a stale tag -> 412 and nothing changes; with the current tag -> ${String(success)}`, async () => {
      const { row, etag: first } = await create('users', { name: 'Guarded' });
      const url = `/users/${String(row.id)}`;
      const second = String((await send('PATCH', url, { bio: 'moved on' })).headers.etag);
      const before = (await send('GET', url)).body;

      const stale = await send(method, url, body, { 'if-match': first });
      const problem = expectProblem(stale, 412, 'precondition-failed');
      expect(problem.errors).toEqual([{ header: 'If-Match', detail: `the current ETag is ${second}` }]);
      expect(stale.headers.etag).toBe(second);
      expect((await send('GET', url)).body).toBe(before);

      const weak = await send(method, url, body, { 'if-match': `W/${second}` });
      expectProblem(weak, 412, 'precondition-failed');
      expect((await send('GET', url)).body).toBe(before);

      const current = await send(method, url, body, { 'if-match': second });
      expect(current.statusCode, current.body).toBe(success);
      if (method === 'DELETE') expect((await send('GET', url)).statusCode).toBe(404);
      else expect(json<Row>(current).name).toBe((body as Row).name);
    });
  }

  it('* and a list containing the current tag pass', async () => {
    const { row, etag } = await create('users', { name: 'Star' });
    const url = `/users/${String(row.id)}`;
    expect((await send('PATCH', url, { bio: 'a' }, { 'if-match': '*' })).statusCode).toBe(200);
    const tag = String((await send('GET', url)).headers.etag);
    expect((await send('PATCH', url, { bio: 'b' }, { 'if-match': `${etag}, ${tag}` })).statusCode).toBe(200);
  });

  it('If-Match on an id that does not exist -> 404', async () => {
    expectProblem(await send('PATCH', '/users/999999', { name: 'x' }, { 'if-match': '*' }), 404, 'not-found');
    expectProblem(await send('DELETE', '/users/999999', undefined, { 'if-match': '"x"' }), 404, 'not-found');
  });

  it('an invalid body is a 422 even with a stale If-Match (the body is checked first)', async () => {
    const { row } = await create('users', { name: 'Order of checks' });
    expectProblem(await send('PATCH', `/users/${String(row.id)}`, { name: 42 }, { 'if-match': '"stale"' }), 422, 'validation-failed');
  });

  it('two PATCHes with the same If-Match at once: exactly one wins, the other gets 412 (no lost update)', async () => {
    for (let round = 0; round < 10; round++) {
      const { row, etag } = await create('users', { name: `Race ${String(round)}` });
      const url = `/users/${String(row.id)}`;
      const [a, b] = await Promise.all([
        send('PATCH', url, { bio: 'from A' }, { 'if-match': etag }),
        send('PATCH', url, { bio: 'from B' }, { 'if-match': etag }),
      ]);
      const statuses = [a.statusCode, b.statusCode].sort();
      expect(statuses).toEqual([200, 412]);
      const winner = a.statusCode === 200 ? a : b;
      expect((await send('GET', url)).body).toBe(winner.body);
    }
  });

  it('PATCH and DELETE with the same If-Match at once: exactly one of them happens', async () => {
    for (let round = 0; round < 5; round++) {
      const { row, etag } = await create('users', { name: `Race delete ${String(round)}` });
      const url = `/users/${String(row.id)}`;
      const [patch, del] = await Promise.all([send('PATCH', url, { bio: 'x' }, { 'if-match': etag }), send('DELETE', url, undefined, { 'if-match': etag })]);
      const after = await send('GET', url);
      if (patch.statusCode === 200) {
        expect(del.statusCode).toBe(412);
        expect(after.body).toBe(patch.body);
      } else {
        expect(patch.statusCode).toBe(404);
        expect(del.statusCode).toBe(204);
        expect(after.statusCode).toBe(404);
      }
    }
  });
});

describe('Idempotency-Key', () => {
  it('POST: a retry replays status, body, Location and ETag with Idempotent-Replayed, and creates one row', async () => {
    const headers = { 'idempotency-key': 'create-once-1' };
    const first = await send('POST', '/users', { name: 'Once only' }, headers);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await send('POST', '/users', { name: 'Once only' }, headers);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(await countUsersNamed('Once only')).toBe(1);
  });

  it('the replay is the first response even after the object changed', async () => {
    const headers = { 'idempotency-key': 'create-then-edit' };
    const first = await send('POST', '/users', { name: 'Original' }, headers);
    await send('PATCH', String(first.headers.location), { name: 'Edited' });
    const retry = await send('POST', '/users', { name: 'Original' }, headers);
    expect(retry.body).toBe(first.body);
    expect(json<Row>(await send('GET', String(first.headers.location))).name).toBe('Edited');
  });

  it('a quoted key (structured field string) is the same key as the bare one', async () => {
    const first = await send('POST', '/users', { name: 'Quoted key' }, { 'idempotency-key': '"quoted-1"' });
    const retry = await send('POST', '/users', { name: 'Quoted key' }, { 'idempotency-key': 'quoted-1' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
  });

  it('PATCH: a retry replays and is not applied again', async () => {
    const { row } = await create('users', { name: 'Patch target' });
    const url = `/users/${String(row.id)}`;
    const headers = { 'idempotency-key': 'patch-once-1' };
    const first = await send('PATCH', url, { bio: 'first' }, headers);
    expect(first.statusCode).toBe(200);
    await send('PATCH', url, { bio: 'later' });
    const retry = await send('PATCH', url, { bio: 'first' }, headers);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(json<Row>(await send('GET', url)).bio).toBe('later');
  });

  it('the same key with another body, path or method -> 422 idempotency-key-reused, and nothing is created', async () => {
    const headers = { 'idempotency-key': 'reused-1' };
    expect((await send('POST', '/users', { name: 'Reuse A' }, headers)).statusCode).toBe(201);
    const otherBody = await send('POST', '/users', { name: 'Reuse B' }, headers);
    expect(expectProblem(otherBody, 422, 'idempotency-key-reused').errors).toEqual([{ header: 'Idempotency-Key', detail: 'belongs to another request' }]);
    expectProblem(await send('POST', '/v1/users', { name: 'Reuse A' }, headers), 422, 'idempotency-key-reused');
    expectProblem(await send('PATCH', '/users/1', { name: 'Reuse A' }, headers), 422, 'idempotency-key-reused');
    expect(await countUsersNamed('Reuse B')).toBe(0);
    expect(await countUsersNamed('Reuse A')).toBe(1);
  });

  const invalidKeys: [string, string][] = [
    ['empty', ''],
    ['an empty quoted string', '""'],
    ['with spaces', 'two words'],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a non-ASCII character', 'clé'],
  ];
  for (const [what, key] of invalidKeys) {
    it(`a key that is ${what} -> 400, and nothing is created`, async () => {
      const name = `Invalid key ${what}`;
      const response = await send('POST', '/users', { name }, { 'idempotency-key': key });
      expect(expectProblem(response, 400, 'bad-request').errors).toEqual([{ header: 'Idempotency-Key', detail: 'must be 1 to 255 visible ASCII characters' }]);
      expect(await countUsersNamed(name)).toBe(0);
    });
  }

  it('a 255-character key is fine', async () => {
    expect((await send('POST', '/users', { name: 'Long key' }, { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(201);
  });

  it('a failed request does not use up its key: the retry runs again', async () => {
    const headers = { 'idempotency-key': 'fails-first' };
    expectProblem(await send('POST', '/users', { name: 'Dup', email: 'owner@example.com' }, headers), 409, 'unique-conflict');
    expectProblem(await send('POST', '/users', { name: 'Dup', email: 'owner@example.com' }, headers), 409, 'unique-conflict');
    const fixed = await send('POST', '/users', { name: 'Dup', email: 'dup@example.com' }, headers);
    expect(fixed.statusCode).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    expect(await countUsersNamed('Dup')).toBe(1);
  });

  it('two identical requests at once: one runs, the other is a 409 in-use or a replay, and one row exists', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `Concurrent ${String(round)}`;
      const headers = { 'idempotency-key': `concurrent-${String(round)}` };
      const responses = await Promise.all([1, 2, 3].map(() => send('POST', '/users', { name }, headers)));
      const fresh = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
      expect(fresh).toHaveLength(1);
      for (const r of responses) {
        if (r === fresh[0]) continue;
        if (r.statusCode === 409) {
          expectProblem(r, 409, 'idempotency-key-in-use');
          expect(r.headers['retry-after']).toBe('1');
        } else {
          expect(r.statusCode).toBe(201);
          expect(r.headers['idempotent-replayed']).toBe('true');
          expect(r.body).toBe(fresh[0]?.body);
        }
      }
      expect(await countUsersNamed(name)).toBe(1);
    }
  });

  it('a key whose first request is still in flight -> 409 idempotency-key-in-use with Retry-After, and nothing is created', async () => {
    // Simulates another instance that has claimed the key and not finished: the stored claim of a
    // finished request is put back in the in-flight state, directly in the database.
    const headers = { 'idempotency-key': 'in-flight-1' };
    expect((await send('POST', '/users', { name: 'In flight' }, headers)).statusCode).toBe(201);
    await setIdempotencyKey('in-flight-1', { state: 'in-flight', createdAt: new Date().toISOString() });
    const retry = await send('POST', '/users', { name: 'In flight' }, headers);
    expectProblem(retry, 409, 'idempotency-key-in-use');
    expect(retry.headers['retry-after']).toBe('1');
    expect(await countUsersNamed('In flight')).toBe(1);
    // Another body with the same key is still a mismatch, in flight or not.
    expectProblem(await send('POST', '/users', { name: 'Other' }, headers), 422, 'idempotency-key-reused');
  });

  it('a claim abandoned for over a minute (crashed request) is taken over by the retry', async () => {
    const headers = { 'idempotency-key': 'abandoned-1' };
    expect((await send('POST', '/users', { name: 'Abandoned' }, headers)).statusCode).toBe(201);
    await setIdempotencyKey('abandoned-1', { state: 'in-flight', createdAt: new Date(Date.now() - 120_000).toISOString() });
    const retry = await send('POST', '/users', { name: 'Abandoned' }, headers);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a key expires after idempotencyTtlMs: then it is a new request', async () => {
    const short = await startTestApp({ idempotencyTtlMs: 20 });
    try {
      const request = { method: 'POST' as const, url: '/users', headers: { 'content-type': 'application/json', 'idempotency-key': 'short-lived' }, payload: '{"name":"Short"}' };
      const first = await short.app.inject(request);
      expect(first.statusCode).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 40));
      const again = await short.app.inject(request);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(json<Row>(again).id).not.toBe(json<Row>(first).id);
    } finally {
      await short.close();
    }
  });

  it('requests without a key are never replayed', async () => {
    const a = await send('POST', '/users', { name: 'No key' });
    const b = await send('POST', '/users', { name: 'No key' });
    expect(a.headers['idempotent-replayed']).toBeUndefined();
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(json<Row>(a).id).not.toBe(json<Row>(b).id);
  });
});

describe('HEAD and OPTIONS', () => {
  const sameHeaders = (head: LightMyRequestResponse, get: LightMyRequestResponse, names: string[]): void => {
    for (const name of names) expect(head.headers[name], name).toBe(get.headers[name]);
  };

  it('HEAD on a list: no body, the headers of GET', async () => {
    const url = '/users?limit=1&count=true';
    const get = await send('GET', url);
    const head = await send('HEAD', url);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.link).toBeDefined();
    sameHeaders(head, get, ['content-type', 'content-length', 'link', 'x-total-count']);
  });

  it('HEAD on an item: no body, the headers of GET', async () => {
    const get = await send('GET', '/users/1');
    const head = await send('HEAD', '/users/1');
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    sameHeaders(head, get, ['content-type', 'content-length', 'etag']);
  });

  it('HEAD on a relation, a system route and a missing item', async () => {
    expect((await send('HEAD', '/users/1/posts')).statusCode).toBe(200);
    expect((await send('HEAD', '/healthz')).statusCode).toBe(200);
    const missing = await send('HEAD', '/users/999999');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('');
  });

  const allows: [string, string][] = [
    ['/users', 'GET, POST, HEAD, OPTIONS'],
    ['/v1/users', 'GET, POST, HEAD, OPTIONS'],
    ['/users/1', 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS'],
    ['/users/1/posts', 'GET, HEAD, OPTIONS'],
    ['/posts/1/user', 'GET, HEAD, OPTIONS'],
    ['/healthz', 'GET, HEAD, OPTIONS'],
    ['/readyz', 'GET, HEAD, OPTIONS'],
    ['/', 'GET, HEAD, OPTIONS'],
  ];
  for (const [url, allow] of allows) {
    it(`OPTIONS ${url} -> 204 with Allow: ${allow}`, async () => {
      const response = await send('OPTIONS', url);
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(response.headers.allow).toBe(allow);
      expect(response.headers['access-control-allow-methods']).toBeUndefined();
    });
  }
});

describe('CORS with the default configuration (any origin)', () => {
  it('answers a preflight with the path\'s methods, the request headers and the max age', async () => {
    const response = await send('OPTIONS', '/users/1', undefined, {
      origin: 'https://anywhere.example',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'content-type, if-match',
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-methods']).toBe('GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
    expect(response.headers['access-control-allow-headers']).toBe('content-type, if-match');
    expect(response.headers['access-control-max-age']).toBe('600');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('without Access-Control-Request-Headers the preflight lists the headers the API reads', async () => {
    const response = await send('OPTIONS', '/users', undefined, { origin: 'https://anywhere.example', 'access-control-request-method': 'POST' });
    const allowed = String(response.headers['access-control-allow-headers']).toLowerCase();
    for (const header of ['content-type', 'if-match', 'if-none-match', 'idempotency-key', 'authorization']) expect(allowed).toContain(header);
  });

  it('normal responses carry Access-Control-Allow-Origin and expose the API\'s headers when Origin is sent', async () => {
    const response = await send('GET', '/users', undefined, { origin: 'https://anywhere.example' });
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(response.headers['access-control-expose-headers']).toLowerCase();
    for (const header of ['etag', 'location', 'link', 'x-total-count', 'x-request-id', 'idempotent-replayed']) expect(exposed).toContain(header);
    const error = await send('GET', '/users/999999', undefined, { origin: 'https://anywhere.example' });
    expect(error.statusCode).toBe(404);
    expect(error.headers['access-control-allow-origin']).toBe('*');
  });

  it('no CORS headers without Origin', async () => {
    const response = await send('GET', '/users');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['access-control-expose-headers']).toBeUndefined();
  });
});

describe('CORS with configured origins', () => {
  let c: TestApp;
  beforeAll(async () => {
    c = await startTestApp({ cors: { origins: ['https://app.example'], maxAgeSeconds: 600 } });
  });
  afterAll(async () => c.close());

  it('a listed origin gets its own origin back, Vary: Origin, and a preflight answer', async () => {
    const preflight = await c.app.inject({ method: 'OPTIONS', url: '/users', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST, HEAD, OPTIONS');
    expect(preflight.headers['access-control-max-age']).toBe('600');
    expect(String(preflight.headers.vary)).toMatch(/\bOrigin\b/i);
    const get = await c.app.inject({ method: 'GET', url: '/users', headers: { origin: 'https://app.example' } });
    expect(get.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(get.headers.vary)).toMatch(/\bOrigin\b/i);
  });

  it('another origin gets no CORS permission (the request itself still runs)', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.evil.com', 'http://app.example', 'null']) {
      const preflight = await c.app.inject({ method: 'OPTIONS', url: '/users', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(preflight.headers['access-control-allow-methods'], origin).toBeUndefined();
      expect(String(preflight.headers.vary)).toMatch(/\bOrigin\b/i);
      const get = await c.app.inject({ method: 'GET', url: '/users', headers: { origin } });
      expect(get.statusCode).toBe(200);
      expect(get.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });

  it('cors: false sends no CORS headers at all', async () => {
    const off = await startTestApp({ cors: false });
    try {
      const preflight = await off.app.inject({ method: 'OPTIONS', url: '/users', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
      const get = await off.app.inject({ method: 'GET', url: '/users', headers: { origin: 'https://app.example' } });
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});

describe('request ids and logs', () => {
  it('echoes a well-formed X-Request-Id', async () => {
    for (const id of ['abc-123', 'trace.id:42_x', 'a'.repeat(128)]) {
      expect((await send('GET', '/healthz', undefined, { 'x-request-id': id })).headers['x-request-id']).toBe(id);
    }
  });

  it('generates a UUID when none (or a malformed one) is given, a new one per request', async () => {
    const a = await send('GET', '/healthz');
    const b = await send('GET', '/healthz');
    expect(a.headers['x-request-id']).toMatch(RANDOM_UUID);
    expect(b.headers['x-request-id']).toMatch(RANDOM_UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    for (const bad of ['has spaces', 'a'.repeat(129), 'semi;colon', '<script>']) {
      expect((await send('GET', '/healthz', undefined, { 'x-request-id': bad })).headers['x-request-id']).toMatch(RANDOM_UUID);
    }
  });

  it('writes exactly one log line per request, with the request id, method, url, status and duration', async () => {
    const cases: [InjectOptions['method'], string, unknown, number][] = [
      ['GET', '/users?limit=1', undefined, 200],
      ['POST', '/users', { name: 'Logged' }, 201],
      ['GET', '/users/999999', undefined, 404],
      ['POST', '/users', { nickname: 'x' }, 422],
      ['DELETE', '/users', undefined, 405],
    ];
    for (const [i, [method, url, body, status]] of cases.entries()) {
      const requestId = `log-check-${String(i)}`;
      const response = await send(method, url, body, { 'x-request-id': requestId });
      expect(response.statusCode).toBe(status);
      const lines = t.logs.filter((line) => line.requestId === requestId);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ msg: 'request', method, url, statusCode: status, level: 30 });
      expect(typeof lines[0]?.durationMs).toBe('number');
    }
  });

  it('log lines say nothing of request bodies or authorization headers', async () => {
    const requestId = 'log-secret-check';
    await send('POST', '/users', { name: 'secret-name-value' }, { 'x-request-id': requestId, authorization: 'Bearer super-secret-token' });
    const text = JSON.stringify(t.logs.filter((line) => line.requestId === requestId));
    expect(text).not.toContain('super-secret-token');
    expect(text).not.toContain('secret-name-value');
  });
});

describe('system routes', () => {
  it('GET /healthz -> 200 {"status":"ok"}', async () => {
    const response = await send('GET', '/healthz');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json(response)).toEqual({ status: 'ok' });
  });

  it('GET /readyz -> 200 {"status":"ready"}', async () => {
    const response = await send('GET', '/readyz');
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({ status: 'ready' });
  });

  it('GET / lists versions and resources, and to an admin which restgraph serves them on which database', async () => {
    const response = await send('GET', '/');
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({
      name: 'restgraph',
      versions: ['v1'],
      latestVersion: 'v1',
      resources: { users: '/users', posts: '/posts', products: '/products', orders: '/orders' },
      server: { version: PACKAGE_VERSION, database: TEST_DIALECT === 'postgres' ? 'PostgreSQL' : 'SQLite' },
    });
  });

  it('/readyz answers 503 with Retry-After once the app is draining, while /healthz stays 200', async () => {
    const own = await startTestApp();
    try {
      own.app.startDraining();
      const ready = await own.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.headers['content-type']).toBe(PROBLEM_TYPE);
      expect(json(ready)).toMatchObject({ code: 'service-unavailable', status: 503 });
      expect(ready.headers['retry-after']).toBe('1');
      expect((await own.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await own.close();
    }
  });
});
