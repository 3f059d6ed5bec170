import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Relation reads (GraphQL relation fields, REST's include=) keep one compiled statement per shape
 * and put each request's keys into it (src/store/record-store.ts, listByKeys): one request after
 * another with the same shape and other parents must each get their own rows, with their own
 * filter and cursor values.
 */

let t: TestApp;
const users: Record<string, number> = {};

async function post(url: string, payload: Record<string, unknown>): Promise<number> {
  const response = await t.app.inject({ method: 'POST', url, payload });
  expect(response.statusCode).toBe(201);
  return response.json<{ id: number }>().id;
}

async function graphql(query: string, variables: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const response = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query, variables } });
  const body = response.json<{ data?: Record<string, unknown>; errors?: unknown[] }>();
  expect(body.errors).toBeUndefined();
  return body.data ?? {};
}

const titles = (posts: unknown): string[] => (posts as { title: string }[]).map((p) => p.title);

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['Ada', 'Grace', 'Edsger']) users[name] = await post('/users', { name });
  for (const [name, count] of [['Ada', 3], ['Grace', 2], ['Edsger', 0]] as const) {
    for (let i = 1; i <= count; i++) await post('/posts', { title: `${name} ${i}`, userId: users[name] });
  }
});
afterAll(() => t.close());

describe('relation reads of the same shape, one parent after another', () => {
  it('GraphQL: each user gets its own last posts', async () => {
    const query = 'query($id: ID!) { user(id: $id) { posts(last: 2) { title } } }';
    const seen: Record<string, string[]> = {};
    for (const name of ['Ada', 'Grace', 'Edsger', 'Ada']) {
      const data = await graphql(query, { id: String(users[name]) });
      seen[name] = titles((data.user as { posts: unknown }).posts);
    }
    expect(seen).toEqual({ Ada: ['Ada 2', 'Ada 3'], Grace: ['Grace 1', 'Grace 2'], Edsger: [] });
  });

  it('GraphQL: several parents in one query (more keys), in either order', async () => {
    const query = `{ a: user(id: "${users.Ada}") { posts { title } } g: user(id: "${users.Grace}") { posts { title } } }`;
    const reversed = `{ g: user(id: "${users.Grace}") { posts { title } } a: user(id: "${users.Ada}") { posts { title } } }`;
    for (const text of [query, reversed, query]) {
      const data = (await graphql(text)) as Record<string, { posts: unknown }>;
      expect(titles(data.a?.posts)).toEqual(['Ada 1', 'Ada 2', 'Ada 3']);
      expect(titles(data.g?.posts)).toEqual(['Grace 1', 'Grace 2']);
    }
  });

  it('GraphQL: the same shape with other filter values and cursors', async () => {
    const query = 'query($id: ID!, $title: String!) { user(id: $id) { posts(filter: { title: { eq: $title } }) { title } } }';
    for (const [name, title] of [['Ada', 'Ada 2'], ['Grace', 'Grace 1'], ['Ada', 'Ada 3'], ['Grace', 'Ada 3']] as const) {
      const data = await graphql(query, { id: String(users[name]), title });
      expect(titles((data.user as { posts: unknown }).posts)).toEqual(title.startsWith(name) ? [title] : []);
    }
  });

  it('REST include=posts: each user embeds its own posts', async () => {
    const counts: Record<string, number> = { Ada: 3, Grace: 2, Edsger: 0 };
    for (const name of ['Grace', 'Ada', 'Edsger', 'Grace']) {
      const response = await t.app.inject({ method: 'GET', url: `/users/${users[name]}?include=posts` });
      expect(response.statusCode).toBe(200);
      expect(titles(response.json<{ posts: unknown }>().posts)).toEqual(Array.from({ length: counts[name] ?? 0 }, (_, i) => `${name} ${i + 1}`));
    }
  });
});
