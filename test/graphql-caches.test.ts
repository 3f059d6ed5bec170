import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyedStatementCache } from '../src/store/keyed-statements.js';
import { queryHash } from './fixtures/graphql-abuse.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * What the GraphQL endpoint keeps between requests is bounded in bytes, not in entries: parsed
 * documents (by the SHA-256 of their text) and automatic persisted queries, whatever their size;
 * and a persisted query is kept only once it has passed every check, and only up to 65,536
 * characters. The store's caches of compiled statements, whose keys hold values clients send,
 * are bounded in bytes too.
 */

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions: Record<string, unknown> }[];
}

const MiB = 1024 * 1024;
const ANONYMOUS = { authorization: '' };

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

afterAll(async () => {
  await t.close();
});

async function post(body: unknown): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...ANONYMOUS }, payload: JSON.stringify(body) });
}

function persisted(query: string): Record<string, unknown> {
  return { persistedQuery: { version: 1, sha256Hash: queryHash(query) } };
}

/** A valid query of `length` characters (a comment pads it), different for each `n`. */
function paddedQuery(n: number, length: number): string {
  const head = `{ __typename } # ${n} `;
  return head + 'x'.repeat(length - head.length);
}

function codeOf(response: LightMyRequestResponse): unknown {
  return json<GraphqlBody>(response).errors?.[0]?.extensions.code;
}

describe('persisted queries are bounded in bytes', () => {
  it('300 distinct 65,000-character persisted queries (19.5 MB) leave the cache under its 16 MiB; the least recently used are forgotten', async () => {
    const queries = Array.from({ length: 300 }, (_, n) => paddedQuery(n, 65_000));
    for (const query of queries) {
      const response = await post({ query, extensions: persisted(query) });
      expect(json<GraphqlBody>(response), response.body.slice(0, 200)).toEqual({ data: { __typename: 'Query' } });
    }
    // The newest is known by its hash alone; the oldest was forgotten.
    const newest = queries.at(-1) ?? '';
    expect(json<GraphqlBody>(await post({ extensions: persisted(newest) }))).toEqual({ data: { __typename: 'Query' } });
    expect(codeOf(await post({ extensions: persisted(queries[0] ?? '') }))).toBe('persisted-query-not-found');
    const use = t.app.restgraph.graphql.cacheUse;
    expect(use.persistedQueries.bytes).toBeLessThanOrEqual(16 * MiB);
    expect(use.persistedQueries.bytes).toBeGreaterThan(15 * MiB);
    expect(use.persistedQueries.entries).toBeLessThan(300);
    expect(use.documents.bytes).toBeLessThanOrEqual(32 * MiB);
  });

  it('a query longer than 65,536 characters runs, and is not kept', async () => {
    const long = paddedQuery(-1, 65_537);
    expect(json<GraphqlBody>(await post({ query: long, extensions: persisted(long) }))).toEqual({ data: { __typename: 'Query' } });
    expect(codeOf(await post({ extensions: persisted(long) }))).toBe('persisted-query-not-found');
    const fits = paddedQuery(-2, 65_536);
    expect(json<GraphqlBody>(await post({ query: fits, extensions: persisted(fits) }))).toEqual({ data: { __typename: 'Query' } });
    expect(json<GraphqlBody>(await post({ extensions: persisted(fits) }))).toEqual({ data: { __typename: 'Query' } });
  });

  it('a persisted query is kept only once it has passed every check: one that does not parse, validate or pass the limits is not', async () => {
    const refused = {
      'graphql-syntax': '{ __typename',
      'graphql-validation': '{ nmae }',
      'query-too-complex': `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')} }`,
      'bad-request': 'query ($v: JSON = { __proto__: 1 }) { __typename }',
    };
    for (const [code, query] of Object.entries(refused)) {
      expect(codeOf(await post({ query, extensions: persisted(query) })), query).toBe(code);
      expect(codeOf(await post({ extensions: persisted(query) })), query).toBe('persisted-query-not-found');
    }
  });
});

describe('parsed documents are bounded in bytes', () => {
  it('40 distinct documents of 900 KB each (36 MB) leave the document cache under its 32 MiB', async () => {
    for (let n = 0; n < 40; n++) {
      const response = await post({ query: paddedQuery(1000 + n, 900_000) });
      expect(json<GraphqlBody>(response)).toEqual({ data: { __typename: 'Query' } });
    }
    const use = t.app.restgraph.graphql.cacheUse;
    expect(use.documents.bytes).toBeLessThanOrEqual(32 * MiB);
    expect(use.documents.entries).toBeLessThan(40);
  });

  it('the bounds are buildApp options', async () => {
    const small = await startTestApp({ graphql: { documentCacheBytes: 256 * 1024, persistedQueryCacheBytes: 128 * 1024 } });
    try {
      for (let n = 0; n < 10; n++) {
        const query = paddedQuery(n, 30_000);
        const response = await small.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ query, extensions: persisted(query) }) });
        expect(json<GraphqlBody>(response)).toEqual({ data: { __typename: 'Query' } });
      }
      const use = small.app.restgraph.graphql.cacheUse;
      expect(use.documents.bytes).toBeLessThanOrEqual(256 * 1024);
      expect(use.persistedQueries.bytes).toBeLessThanOrEqual(128 * 1024);
      expect(use.persistedQueries.entries).toBe(2);
    } finally {
      await small.close();
    }
  });
});

describe('compiled statements kept by shape are bounded in bytes', () => {
  it('statements whose shapes hold long values stay under the bound; the least recently used are forgotten', () => {
    const cache = new KeyedStatementCache(64 * 1024);
    const compile = (keys: readonly unknown[]) => ({ sql: `select * from "posts" where "title" = ? and "userId" in (${keys.map(() => '?').join(', ')})`, parameters: ['t'.repeat(2000), ...keys] });
    let compiled = 0;
    const counting = (keys: readonly unknown[]) => {
      compiled++;
      return compile(keys);
    };
    for (let n = 0; n < 200; n++) cache.statement(`posts|userId|2|{"title":"${'t'.repeat(2000)}${n}"}`, [1, 2], counting);
    expect(cache.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(cache.bytes).toBeGreaterThan(32 * 1024);
    // The newest shape is kept (no compiling), the oldest is not.
    const before = compiled;
    expect(cache.statement(`posts|userId|2|{"title":"${'t'.repeat(2000)}199"}`, [3, 4], counting).parameters).toEqual(['t'.repeat(2000), 3, 4]);
    expect(compiled).toBe(before);
    cache.statement(`posts|userId|2|{"title":"${'t'.repeat(2000)}0"}`, [3, 4], counting);
    expect(compiled).toBe(before + 1);
  });
});
