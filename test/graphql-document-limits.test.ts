import { parse, visit } from 'graphql';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureDocument } from '../src/graphql/query-limits.js';
import { ADMIN, listenApp, tempDatabase, type ListeningApp } from './helpers/event-stream.js';
import { codes, refusalOf, sseClient, wsClient, type SubscriptionClient } from './helpers/subscription-clients.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import {
  EXPONENTIAL_DOCUMENT,
  GRAPHQL_ABUSE_CASES,
  abuseAnswerProblems,
  doublingFragmentDefinitions,
  doublingFragments,
  doublingSelections,
  nestedList,
  queryHash,
} from './fixtures/graphql-abuse.js';

/**
 * What a GraphQL document may ask before anything runs, on every transport: fragments are measured
 * once each (a document that expands exponentially is refused by the expanded-selections budget
 * before validation, compilation or execution), documents nesting brackets too deep are refused
 * before parsing, and every input value (literals and variables) follows REST's body rules:
 * at most 64 levels deep, no `__proto__` or `constructor.prototype` member.
 */

interface GraphqlError {
  message: string;
  extensions: Record<string, unknown>;
}
interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: GraphqlError[];
}

const ANONYMOUS = { authorization: '' };
const DEFAULT_MAX_SELECTIONS = 10_000;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  const user = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } });
  expect(user.statusCode, user.body).toBe(201);
});

afterAll(async () => {
  await t.close();
});

async function post(body: unknown, headers: Record<string, string> = {}, app: TestApp = t): Promise<LightMyRequestResponse> {
  return app.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function get(params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  return t.app.inject({ method: 'GET', url: `/graphql?${search.toString()}`, headers });
}

/** The one error of a response refused before execution (HTTP 200 with application/json, no data). */
function refusal(response: LightMyRequestResponse): GraphqlError {
  expect(response.statusCode, response.body).toBe(200);
  const body = json<GraphqlBody>(response);
  expect(body.data, response.body).toBeUndefined();
  expect(body.errors?.length, response.body).toBe(1);
  const [error] = body.errors ?? [];
  if (error === undefined) throw new Error('no error');
  return error;
}

function dataOf(response: LightMyRequestResponse): Record<string, unknown> {
  expect(response.statusCode, response.body).toBe(200);
  const body = json<GraphqlBody>(response);
  expect(body.errors, response.body).toBeUndefined();
  return body.data ?? {};
}

const selectionsRefusal = (actual: number, max = DEFAULT_MAX_SELECTIONS): Record<string, unknown> => ({ code: 'query-too-complex', status: 400, limit: 'maxSelections', actual, max });

describe('documents that expand exponentially through fragments', () => {
  it('the 22-level document (849 bytes) is refused at once with query-too-complex: 6,291,456 selections once expanded, over the budget of 10,000', async () => {
    expect(EXPONENTIAL_DOCUMENT.length).toBeLessThan(900);
    const error = refusal(await post({ query: EXPONENTIAL_DOCUMENT }));
    expect(error.extensions).toEqual(selectionsRefusal(6_291_456));
    expect(error.message).toBe('The query has 6291456 selections (fields, fragment spreads, inline fragments) once its fragments are expanded; at most 10000 are allowed.');
  });

  it('is measured before validation: the same document with an unknown field is refused by the budget, not by validation', async () => {
    const error = refusal(await post({ query: doublingFragments(22, ' nmae') }));
    expect(error.extensions).toEqual(selectionsRefusal(4 * 2 ** 21));
  });

  it('each fragment is measured once: 1,000 levels (2^999 uses) are refused with the count saturated, and the measure visits each selection of the document once', async () => {
    const levels = 1000;
    const big = await startTestApp({ graphql: { maxTokens: 100_000 } });
    try {
      const error = refusal(await post({ query: doublingFragments(levels) }, {}, big));
      expect(error.extensions).toEqual(selectionsRefusal(MAX_SAFE));
    } finally {
      await big.close();
    }
    const document = parse(doublingFragments(levels));
    let selectionNodes = 0;
    const count = (): void => {
      selectionNodes++;
    };
    visit(document, { Field: count, FragmentSpread: count, InlineFragment: count });
    const measured = measureDocument(document);
    expect(measured.visited).toBe(selectionNodes);
    expect(measured.shape.selections).toBe(MAX_SAFE);
  });

  it('cycles and unknown fragments are measured without looping and refused by validation', async () => {
    const cycle = refusal(await post({ query: '{ user(id: "1") { ...A } } fragment A on User { name ...B } fragment B on User { ...A }' }));
    expect(cycle.extensions.code).toBe('graphql-validation');
    const unknown = refusal(await post({ query: '{ user(id: "1") { ...Missing } }' }));
    expect(unknown.extensions.code).toBe('graphql-validation');
    const self = measureDocument(parse('{ user(id: "1") { ...A } } fragment A on User { name ...A }'));
    expect(self.shape).toMatchObject({ selections: 4, depth: 2 });
  });

  it('every operation of the document is measured, not only the one run: their selections count together', async () => {
    const query = `query Small { __typename } query Big { user(id: "1") { ...F0 } } ${doublingFragmentDefinitions(22)}`;
    const error = refusal(await post({ query, operationName: 'Small' }));
    expect(error.extensions).toEqual(selectionsRefusal(1 + doublingSelections(22)));
  });

  it('at the budget a document runs; one selection more is refused (RESTGRAPH_GRAPHQL_MAX_SELECTIONS)', async () => {
    const small = await startTestApp({ graphql: { maxSelections: 24 } });
    try {
      expect((await small.app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } })).statusCode).toBe(201);
      // user, ...F0, 3 × 2 spreads (F0 to F2, each use) and 8 names = 24
      expect(doublingSelections(4)).toBe(24);
      expect(dataOf(await post({ query: doublingFragments(4) }, {}, small))).toEqual({ user: { name: 'Ada' } });
      expect(refusal(await post({ query: doublingFragments(4, ' ... on User { id }') }, {}, small)).extensions).toEqual(selectionsRefusal(24 + 16, 24));
      // The operations of a document count together.
      const three = ['A', 'B', 'C'].map((name) => `query ${name} { ${'__typename '.repeat(10)}}`).join(' ');
      expect(refusal(await post({ query: three, operationName: 'A' }, {}, small)).extensions).toEqual(selectionsRefusal(30, 24));
    } finally {
      await small.close();
    }
  });

  it('fragments used as clients use them still run, with depth, aliases and cost counted per use', async () => {
    const query = '{ user(id: "1") { ...Named ... on User { a: name } } } fragment Named on User { name b: name posts(first: 2) { title } }';
    expect(dataOf(await post({ query }))).toEqual({ user: { name: 'Ada', b: 'Ada', posts: [], a: 'Ada' } });
    const strict = await startTestApp({ graphql: { maxDepth: 2, maxAliases: 1, maxCost: 5 } });
    try {
      const errors = json<GraphqlBody>(await post({ query }, {}, strict)).errors ?? [];
      expect(errors.map((e) => [e.extensions.limit, e.extensions.actual])).toEqual([
        ['maxDepth', 3],
        ['maxAliases', 2],
      ]);
      const cost = refusal(await post({ query: '{ ...P ...P } fragment P on Query { posts(first: 3) { id } }' }, {}, strict));
      expect(cost.extensions).toMatchObject({ limit: 'maxCost', actual: 6, max: 5 });
    } finally {
      await strict.close();
    }
  });

  it('GET: refused the same way', async () => {
    expect(refusal(await get({ query: EXPONENTIAL_DOCUMENT }, ANONYMOUS)).extensions).toEqual(selectionsRefusal(doublingSelections(22)));
  });

  it('persisted queries: the document sent with its hash is refused and not kept; its hash alone stays unknown', async () => {
    const extensions = { persistedQuery: { version: 1, sha256Hash: queryHash(EXPONENTIAL_DOCUMENT) } };
    expect(refusal(await post({ query: EXPONENTIAL_DOCUMENT, extensions })).extensions).toEqual(selectionsRefusal(doublingSelections(22)));
    expect(refusal(await post({ extensions })).extensions.code).toBe('persisted-query-not-found');
    expect(refusal(await get({ extensions }, ANONYMOUS)).extensions.code).toBe('persisted-query-not-found');
  });
});

describe('the same field many times at one place', () => {
  const sideBySide = (count: number): string => `{ user(id: "1") { ${'posts { title } '.repeat(count)}} }`;
  const pairs = (count: number): number => count * (count - 1);

  it('1,200 times (1,438,800 pairs for validation to compare, 0.2 to 0.5 s) is refused before validation', async () => {
    const error = refusal(await post({ query: sideBySide(1200) }, ANONYMOUS));
    expect(error.extensions).toEqual({ code: 'query-too-complex', status: 400, limit: 'maxFieldPairs', actual: 1_438_800, max: 10_000 });
    expect(error.message).toBe('The query has 1438800 pairs of fields with one name at one place (as in "{ name name }"), each of which validation compares; at most 10000 are allowed. Select each field once.');
  });

  it('up to 10,000 pairs run; more are refused; pairs met through fragments count', async () => {
    expect(pairs(100)).toBe(9900);
    expect(dataOf(await post({ query: sideBySide(100) }))).toEqual({ user: { posts: [] } });
    expect(refusal(await post({ query: sideBySide(101) })).extensions).toMatchObject({ limit: 'maxFieldPairs', actual: pairs(101) });
    const fragments = (count: number): string =>
      `{ user(id: "1") { ${Array.from({ length: count }, (_, i) => `...F${i}`).join(' ')} } } ${Array.from({ length: count }, (_, i) => `fragment F${i} on User { id }`).join(' ')}`;
    // Fifty fragments selecting the same field at one place, as generated client code does, run.
    expect(dataOf(await post({ query: fragments(50) }))).toEqual({ user: { id: '1' } });
    expect(refusal(await post({ query: fragments(150) })).extensions).toMatchObject({ limit: 'maxFieldPairs', actual: (150 * 149) / 2 });
  });

  it('a cycle of fragments is refused by its validation rule alone, before the pairs are counted', async () => {
    const error = refusal(await post({ query: `{ user(id: "1") { ...A } } fragment A on User { ...B } fragment B on User { ...A ${'name '.repeat(200)}}` }));
    expect(error.extensions.code).toBe('graphql-validation');
    expect(error.message).toBe('Cannot spread fragment "A" within itself via "B".');
  });
});

describe('over WebSocket and Server-Sent Events', () => {
  let server: ListeningApp;
  let cleanup: () => Promise<void>;
  const clients: SubscriptionClient[] = [];

  beforeAll(async () => {
    const db = await tempDatabase();
    cleanup = db.cleanup;
    server = await listenApp(db.url);
  });

  afterAll(async () => {
    for (const client of clients) await client.dispose();
    await server.close();
    await cleanup();
  });

  for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
    it(`${transport}: the exponential document, a document nested too deep and a variable nested too deep are refused before anything runs`, async () => {
      const client = transport === 'graphql-ws' ? wsClient(server.base, { connectionParams: { Authorization: ADMIN } }) : sseClient(server.base, { headers: { authorization: ADMIN } });
      clients.push(client);
      const exponential = refusalOf(await client.run(EXPONENTIAL_DOCUMENT).waitForEnd());
      expect(exponential[0]?.extensions).toEqual(selectionsRefusal(doublingSelections(22)));
      const subscription = refusalOf(await client.run(`subscription { userCreated { ...F0 } } ${doublingFragmentDefinitions(22)}`).waitForEnd());
      expect(subscription[0]?.extensions).toMatchObject({ code: 'query-too-complex', limit: 'maxSelections' });
      const nested = refusalOf(await client.run(`{ products(filter: { name: { in: ${nestedList(2400, '"1"')} } }) { id } }`).waitForEnd());
      expect(nested[0]?.extensions).toMatchObject({ code: 'query-too-complex', limit: 'maxNesting' });
      const variable = refusalOf(await client.run('mutation ($tags: JSON) { createPost(input: { title: "t", userId: "1", tags: $tags }) { id } }', { tags: deepArray(100) }).waitForEnd());
      expect(codes(variable)).toEqual(['bad-request']);
    });
  }
});

/** A value nested `depth` arrays deep, built without recursion. */
function deepArray(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe('documents nested too deep are refused before parsing', () => {
  it('a list literal nested 2,400 levels (anonymous, under the token limit) is refused with query-too-complex (maxNesting), not a 500', async () => {
    const query = `{ products(filter: { name: { in: ${nestedList(2400, '"1"')} } }) { id } }`;
    const error = refusal(await post({ query }, ANONYMOUS));
    expect(error.extensions).toEqual({ code: 'query-too-complex', status: 400, limit: 'maxNesting', max: 82 });
  });

  it('the nesting allowed follows maxDepth: depth + 72 brackets pass the scan, one more is refused', async () => {
    const at = `{ products(filter: { name: { in: ${nestedList(82 - 4, '"1"')} } }) { id } }`;
    // Passes the scan, then meets the rule on values (64 levels).
    expect(refusal(await post({ query: at })).extensions.code).toBe('bad-request');
    const over = `{ products(filter: { name: { in: ${nestedList(82 - 3, '"1"')} } }) { id } }`;
    expect(refusal(await post({ query: over })).extensions).toMatchObject({ limit: 'maxNesting', max: 82 });
  });

  it('brackets inside strings, block strings and comments do not count', async () => {
    const brackets = '[{('.repeat(300);
    const query = `# ${brackets}\n{ products(filter: { name: { eq: ${JSON.stringify(brackets)} } }) { id } a: products(filter: { name: { eq: """${brackets}""" } }) { id } }`;
    expect(dataOf(await post({ query }))).toEqual({ products: [], a: [] });
  });
});

describe('input values follow REST body rules (depth 64, no __proto__ or constructor.prototype)', () => {
  const createPost = 'mutation ($tags: JSON) { createPost(input: { title: "t", userId: "1", tags: $tags }) { id tags } }';
  const literal = (tags: string): string => `mutation { createPost(input: { title: "t", userId: "1", tags: ${tags} }) { id tags } }`;

  async function storedPosts(): Promise<unknown[]> {
    return json<unknown[]>(await t.app.inject({ method: 'GET', url: '/posts' }));
  }

  it('a JSON variable nested 5,000 levels is refused with bad-request, not an internal error', async () => {
    const body = `{"query":${JSON.stringify(createPost)},"variables":{"tags":${nestedList(5000, '1')}}}`;
    const error = refusal(await post(body));
    expect(error.extensions).toEqual({ code: 'bad-request', status: 400 });
    expect(error.message).toBe('The variables nest arrays and objects more than 64 levels deep.');
    expect(await storedPosts()).toEqual([]);
  });

  it('variables nested 64 levels (the variables object and 63 arrays) are stored; 65 levels are refused', async () => {
    const at = dataOf(await post({ query: createPost, variables: { tags: deepArray(63) } }));
    expect(at).toMatchObject({ createPost: { tags: deepArray(63) } });
    expect(refusal(await post({ query: createPost, variables: { tags: deepArray(64) } })).extensions.code).toBe('bad-request');
    await t.app.inject({ method: 'DELETE', url: `/posts/${(at.createPost as { id: string }).id}` });
  });

  it('a __proto__ member in a variable is refused, and nothing is stored', async () => {
    const body = `{"query":${JSON.stringify(createPost)},"variables":{"tags":{"a":1,"__proto__":{"polluted":true}}}}`;
    const error = refusal(await post(body));
    expect(error.extensions).toEqual({ code: 'bad-request', status: 400 });
    expect(error.message).toBe('The variables contain a "__proto__" or "constructor.prototype" member, which is never accepted.');
    const deep = `{"query":${JSON.stringify(createPost)},"variables":{"tags":[{"b":{"constructor":{"prototype":{"x":1}}}}]}}`;
    expect(refusal(await post(deep)).extensions.code).toBe('bad-request');
    expect(await storedPosts()).toEqual([]);
  });

  it('a __proto__ or constructor.prototype member in a literal is refused, and nothing is stored', async () => {
    const proto = refusal(await post({ query: literal('{ a: 1, __proto__: { polluted: true } }') }));
    expect(proto.extensions).toEqual({ code: 'bad-request', status: 400 });
    expect(proto.message).toBe('An argument value contains a "__proto__" or "constructor.prototype" member, which is never accepted.');
    expect(refusal(await post({ query: literal('[{ constructor: { prototype: { polluted: true } } }]') })).extensions.code).toBe('bad-request');
    expect(await storedPosts()).toEqual([]);
  });

  it('a literal nested 1,200 levels is refused before parsing; an argument nested 65 levels after parsing, by the value rule; 64 levels are stored', async () => {
    expect(refusal(await post({ query: literal(nestedList(1200, '1')) })).extensions).toMatchObject({ code: 'query-too-complex', limit: 'maxNesting' });
    // The input object is one level, its tags 64 more.
    const over = refusal(await post({ query: literal(nestedList(64, '1')) }));
    expect(over.extensions).toEqual({ code: 'bad-request', status: 400 });
    expect(over.message).toBe('An argument value nests lists and objects more than 64 levels deep.');
    expect(await storedPosts()).toEqual([]);
    const at = dataOf(await post({ query: literal(nestedList(63, '1')) }));
    expect(at).toMatchObject({ createPost: { tags: deepArray(63) } });
  });

  it('variables sent with GET follow the same rules', async () => {
    const query = 'query ($f: PostFilter) { posts(filter: $f) { id } }';
    const search = `query=${encodeURIComponent(query)}&variables=${encodeURIComponent(`{"f":{"__proto__":{"title":{"eq":"x"}}}}`)}`;
    const response = await t.app.inject({ method: 'GET', url: `/graphql?${search}`, headers: ANONYMOUS });
    expect(refusal(response).extensions.code).toBe('bad-request');
  });
});

describe('the abuse cases a live server is checked with', () => {
  for (const abuse of GRAPHQL_ABUSE_CASES) {
    it(`${abuse.name}: ${abuse.about}`, async () => {
      const response = await t.app.inject({ method: abuse.method, url: abuse.path, headers: { ...abuse.headers, ...ANONYMOUS }, ...(abuse.body === undefined ? {} : { payload: abuse.body }) });
      expect(abuseAnswerProblems(abuse, response.statusCode, response.body), response.body.slice(0, 500)).toEqual([]);
    });
  }
});
