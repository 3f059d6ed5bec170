import fc from 'fast-check';
import { execute, type ExecutionResult, type GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationContext } from '../src/core/principal.js';
import { isFieldsOnly } from '../src/graphql/compiled-execution.js';
import type { PreparedArgs } from '../src/graphql/graphql-context.js';
import { parse } from 'graphql';
import { SKIPPED_FRAGMENT_DOCUMENT, SKIPPED_FRAGMENT_ON_QUERY } from './fixtures/graphql-abuse.js';
import { TEST_ADMIN_TOKEN, json, startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Execution gives what the GraphQL specification says, whichever executor runs a document
 * (graphql-jit's compiled form for documents made of fields alone, graphql-js for the others):
 * the document graphql-jit 0.8.9 got wrong, then a differential property test holding /graphql to
 * graphql-js's own `execute` on generated documents with fragments, inline fragments, @skip and
 * @include (literal and variable conditions), aliases and variables, over the same data.
 */

interface Answer {
  data?: unknown;
  errors?: { path?: readonly (string | number)[]; extensions?: { code?: unknown } }[];
}

let t: TestApp;
let ctx: OperationContext;

beforeAll(async () => {
  t = await startTestApp();
  const users = [
    { name: 'Ada', email: 'ada@example.org', bio: 'First' },
    { name: 'Brian', email: null, bio: null },
    { name: 'Cleo', email: 'cleo@example.org' },
  ];
  for (const user of users) expect((await t.app.inject({ method: 'POST', url: '/users', payload: user })).statusCode).toBe(201);
  const posts = [
    { title: 'Hello', userId: 1, body: 'Hi', published: true, tags: { topics: ['intro'], n: 1 } },
    { title: 'Again', userId: 1, tags: ['a', 'b'] },
    { title: 'Third', userId: 2, published: false },
    { title: 'Fourth', userId: 1, body: 'More', tags: null },
  ];
  for (const post of posts) expect((await t.app.inject({ method: 'POST', url: '/posts', payload: post })).statusCode).toBe(201);
  ctx = { principal: await t.app.restgraph.authenticator.authenticate(`Bearer ${TEST_ADMIN_TOKEN}`), requestId: 'differential', clientAddress: '127.0.0.1' };
});

afterAll(async () => {
  await t.close();
});

async function viaHttp(query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const response = await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ query, variables }) });
  expect(response.statusCode, response.body).toBe(200);
  return json<Answer>(response);
}

/** graphql-js's execute on the same schema, context and data, its errors formatted as /graphql formats them. */
async function viaGraphqlJs(query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const service = t.app.restgraph.graphql;
  const prepared = await service.prepare({ query, ...(variables === undefined ? {} : { variables }) }, ctx);
  if (Array.isArray(prepared)) return { errors: (prepared as readonly GraphQLError[]).map((e) => service.formatError(e).toJSON()) };
  const result: ExecutionResult = await execute(prepared as PreparedArgs);
  return { data: result.data, ...(result.errors === undefined ? {} : { errors: result.errors.map((e) => service.formatError(e).toJSON()) }) };
}

/** The parts that must agree: data (field order included) and each error's path and code. */
function comparable(answer: Answer): { data: string; errors: string[] } {
  return {
    data: JSON.stringify(answer.data),
    errors: (answer.errors ?? []).map((e) => JSON.stringify([e.path ?? null, e.extensions?.code])).sort(),
  };
}

describe('fragments skipped in one place and included through another', () => {
  it('the issue’s document returns the name, as graphql-js does (graphql-jit 0.8.9 answered {"user":{}})', async () => {
    expect(await viaHttp(SKIPPED_FRAGMENT_DOCUMENT)).toEqual({ data: { user: { name: 'Ada' } } });
    expect(comparable(await viaGraphqlJs(SKIPPED_FRAGMENT_DOCUMENT))).toEqual(comparable({ data: { user: { name: 'Ada' } } }));
    expect(await viaHttp(SKIPPED_FRAGMENT_ON_QUERY)).toEqual({ data: { __typename: 'Query' } });
  });
});

// ---- the document generator ----------------------------------------------------------------

type TypeName = 'Query' | 'User' | 'Post';

/** A field one level may select: its text (alias and arguments included) and, for objects, its type. */
interface FieldEntry {
  text: string;
  type?: TypeName;
}

/**
 * The fields of each type. A response name always stands for the same field and arguments, so
 * generated documents are valid: fields with one response name merge.
 */
const FIELDS: Record<TypeName, readonly FieldEntry[]> = {
  Query: [
    { text: 'user(id: $uid)', type: 'User' },
    { text: 'second: user(id: "2")', type: 'User' },
    { text: 'users(first: $n)', type: 'User' },
    { text: 'posts(first: 3)', type: 'Post' },
    { text: 'newest: posts(last: 2)', type: 'Post' },
    { text: '__typename' },
  ],
  User: [
    { text: 'id' },
    { text: 'name' },
    { text: 'email' },
    { text: 'bio' },
    { text: 'alias: name' },
    { text: '__typename' },
    { text: 'posts(first: 2)', type: 'Post' },
    { text: 'latest: posts(last: 1)', type: 'Post' },
  ],
  Post: [{ text: 'id' }, { text: 'title' }, { text: 'body' }, { text: 'published' }, { text: 'tags' }, { text: 'heading: title' }, { text: 'user', type: 'User' }],
};

const DIRECTIVES = ['@skip(if: true)', '@skip(if: false)', '@include(if: true)', '@include(if: false)', '@skip(if: $s)', '@include(if: $i)'];
const VARIABLES: Record<string, string> = { s: 'Boolean!', i: 'Boolean!', uid: 'ID!', n: 'Int' };
const FRAGMENT_LEVELS = [2, 1, 0];
const MAX_FIELD_DEPTH = 3;

interface Generated {
  query: string;
  variables: Record<string, unknown>;
}

/**
 * A valid document with one operation: fields of the catalogue (aliases, literal and variable
 * arguments), inline fragments with and without a type condition, named fragments spreading
 * fragments of higher levels (so never in a cycle), each optionally under @skip or @include.
 * `fieldsOnly` leaves out fragments and directives (the documents graphql-jit compiles).
 */
function generateDocument(g: fc.GeneratorValue, fieldsOnly: boolean): Generated {
  const chance = (percent: number): boolean => g(fc.integer, { min: 0, max: 99 }) < percent;
  const pick = <T,>(items: readonly T[]): T => items[g(fc.integer, { min: 0, max: items.length - 1 })] as T;
  const directive = (): string => (!fieldsOnly && chance(35) ? ` ${pick(DIRECTIVES)}` : '');
  const fragmentName = (type: TypeName, level: number): string => `${type}L${level}`;
  const spreadsOf = new Map<string, Set<string>>();

  const selections = (type: TypeName, depth: number, level: number, spreads: Set<string>): string => {
    const parts: string[] = [];
    const count = g(fc.integer, { min: 1, max: 3 });
    for (let i = 0; i < count; i++) {
      const kind = fieldsOnly ? 0 : g(fc.integer, { min: 0, max: 9 });
      if (kind >= 8 && level < 2) {
        const target = g(fc.integer, { min: level + 1, max: 2 });
        spreads.add(fragmentName(type, target));
        parts.push(`...${fragmentName(type, target)}${directive()}`);
      } else if (kind >= 6) {
        const condition = chance(50) ? ` on ${type}` : '';
        parts.push(`...${condition}${directive()} { ${selections(type, depth, level, spreads)} }`);
      } else {
        const field = pick(FIELDS[type].filter((f) => f.type === undefined || depth < MAX_FIELD_DEPTH));
        parts.push(field.type === undefined ? `${field.text}${directive()}` : `${field.text}${directive()} { ${selections(field.type, depth + 1, level, spreads)} }`);
      }
    }
    return parts.join(' ');
  };

  const bodies = new Map<string, string>();
  if (!fieldsOnly) {
    for (const level of FRAGMENT_LEVELS) {
      for (const type of ['Query', 'User', 'Post'] as const) {
        const spreads = new Set<string>();
        bodies.set(fragmentName(type, level), `fragment ${fragmentName(type, level)} on ${type} { ${selections(type, 1, level, spreads)} }`);
        spreadsOf.set(fragmentName(type, level), spreads);
      }
    }
  }
  const rootSpreads = new Set<string>();
  const operation = selections('Query', 0, -1, rootSpreads);
  // Only the fragments used (an unused one is a validation error).
  const used = new Set<string>();
  const pending = [...rootSpreads];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (used.has(name)) continue;
    used.add(name);
    pending.push(...(spreadsOf.get(name) ?? []));
  }
  const fragments = [...used].map((name) => bodies.get(name)).join(' ');
  const text = `${operation} ${fragments}`;
  const declared = Object.keys(VARIABLES).filter((name) => new RegExp(`\\$${name}\\b`).test(text));
  const declarations = declared.length === 0 ? '' : `(${declared.map((name) => `$${name}: ${VARIABLES[name] ?? ''}`).join(', ')})`;
  const values: Record<string, unknown> = { s: chance(50), i: chance(50), uid: pick(['1', '2', '3', '99']), n: pick([0, 1, 2, null]) };
  const variables = Object.fromEntries(declared.map((name) => [name, values[name]]));
  return { query: `query Generated${declarations} { ${operation} } ${fragments}`.trim(), variables };
}

describe('differential: /graphql against graphql-js execute', () => {
  it('generated documents with fragments, inline fragments, @skip/@include, aliases and variables give graphql-js’s results', async () => {
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        const { query, variables } = generateDocument(g, false);
        const ours = comparable(await viaHttp(query, variables));
        const reference = comparable(await viaGraphqlJs(query, variables));
        expect(ours, `${query}\n${JSON.stringify(variables)}`).toEqual(reference);
        expect(ours.errors.filter((e) => /graphql-validation|internal/.test(e)), query).toEqual([]);
      }),
      { numRuns: 150 },
    );
    // Shrinking a counterexample takes many requests.
  }, 120_000);

  it('documents of fields alone (run compiled by graphql-jit) give graphql-js’s results', async () => {
    let compiled = 0;
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        const { query, variables } = generateDocument(g, true);
        expect(isFieldsOnly(parse(query))).toBe(true);
        compiled++;
        const ours = comparable(await viaHttp(query, variables));
        expect(ours, `${query}\n${JSON.stringify(variables)}`).toEqual(comparable(await viaGraphqlJs(query, variables)));
      }),
      { numRuns: 100 },
    );
    expect(compiled).toBeGreaterThanOrEqual(100);
  });

  it('which documents run compiled: fields alone; a fragment, inline fragment or directive anywhere sends a document to graphql-js', () => {
    expect(isFieldsOnly(parse('query ($id: ID!) { user(id: $id) { name a: email posts(last: 2) { title } } }'))).toBe(true);
    for (const query of ['{ ...F } fragment F on Query { __typename }', '{ ... on Query { __typename } }', '{ __typename @include(if: true) }', 'query @skip(if: false) { __typename }', 'query ($a: Int @deprecated) { __typename }']) {
      expect(isFieldsOnly(parse(query)), query).toBe(false);
    }
  });
});
