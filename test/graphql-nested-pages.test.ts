import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { dataOf, graphql, onlyError, type GraphqlErrorBody } from './helpers/graphql-request.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Relation lists nested in a query (`authors { books { reviews } }`) page 10 rows at a time unless
 * `first`/`last` says otherwise, and the cost counts them so: a newcomer's natural three-level
 * query runs (100 + 100 × 10 + 100 × 10 × 10 = 11,100 objects at most), while a query asking for
 * much more is still refused, naming the field whose `first:` would help most.
 */

const SCHEMA = parseSchemaText(`
resources:
  authors:
    fields:
      name: { type: string, required: true }
    relations:
      books: { hasMany: books, foreignKey: authorId }
  books:
    fields:
      title: { type: string, required: true }
      authorId: { type: integer, required: true, references: authors }
    relations:
      author: { belongsTo: authors, foreignKey: authorId }
      reviews: { hasMany: reviews, foreignKey: bookId }
  reviews:
    fields:
      stars: { type: integer, required: true, min: 1, max: 5 }
      bookId: { type: integer, required: true, references: books }
    relations:
      book: { belongsTo: books, foreignKey: bookId }
`);

const THREE_LEVELS = '{ authors { name books { title reviews { stars } } } }';

let t: TestApp;

async function post(url: string, payload: Record<string, unknown>): Promise<number> {
  const response = await t.app.inject({ method: 'POST', url, payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ id: number }>().id;
}

const starsOf = (n: number): number => ((n - 1) % 5) + 1;
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

beforeAll(async () => {
  t = await startTestApp({ schema: SCHEMA });
  const austen = await post('/authors', { name: 'Austen' });
  const borges = await post('/authors', { name: 'Borges' });
  await post('/authors', { name: 'Calvino' });
  const austensFirst = await post('/books', { title: 'Austen 1', authorId: austen });
  for (const n of range(2, 12)) await post('/books', { title: `Austen ${n}`, authorId: austen });
  const borgesFirst = await post('/books', { title: 'Borges 1', authorId: borges });
  await post('/books', { title: 'Borges 2', authorId: borges });
  for (const n of range(1, 13)) await post('/reviews', { stars: starsOf(n), bookId: austensFirst });
  for (const n of range(1, 2)) await post('/reviews', { stars: starsOf(n), bookId: borgesFirst });
});
afterAll(() => t.close());

function costRefusal(error: GraphqlErrorBody, actual: number, field: string): void {
  expect(error.extensions).toEqual({ code: 'query-too-complex', status: 400, limit: 'maxCost', actual, max: 50_000, field });
  expect(error.message).toContain(`a smaller first: (or last:) on ${field} would help most`);
}

describe('nested relation lists page 10 rows by default', () => {
  it('the natural three-level query runs and returns the first 10 rows of each nested list', async () => {
    const data = dataOf(await graphql(t.app, THREE_LEVELS));
    const austenReviews = range(1, 10).map((n) => ({ stars: starsOf(n) }));
    expect(data).toEqual({
      authors: [
        {
          name: 'Austen',
          books: range(1, 10).map((n) => ({ title: `Austen ${n}`, reviews: n === 1 ? austenReviews : [] })),
        },
        { name: 'Borges', books: [{ title: 'Borges 1', reviews: [{ stars: 1 }, { stars: 2 }] }, { title: 'Borges 2', reviews: [] }] },
        { name: 'Calvino', books: [] },
      ],
    });
  });

  it('the same under a single object, through a connection, and a top-level list keeps its 100', async () => {
    const one = dataOf(await graphql<{ author: { books: unknown[] } }>(t.app, '{ author(id: "1") { books { title } } }'));
    expect(one.author.books).toHaveLength(10);
    const top = dataOf(await graphql<{ reviews: unknown[] }>(t.app, '{ reviews { stars } }'));
    expect(top.reviews).toHaveLength(15);
  });

  it('the list still pages on with first/after and last', async () => {
    type Page = { author: { booksConnection: { nodes: { title: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } } };
    const query = 'query($after: String) { author(id: "1") { booksConnection(after: $after) { nodes { title } pageInfo { hasNextPage endCursor } } } }';
    const first = dataOf(await graphql<Page>(t.app, query)).author.booksConnection;
    expect(first.nodes.map((b) => b.title)).toEqual(range(1, 10).map((n) => `Austen ${n}`));
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = dataOf(await graphql<Page>(t.app, query, { variables: { after: first.pageInfo.endCursor } })).author.booksConnection;
    expect(second.nodes.map((b) => b.title)).toEqual(['Austen 11', 'Austen 12']);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const all = dataOf(await graphql<{ author: { books: unknown[]; last: { title: string }[] } }>(t.app, '{ author(id: "1") { books(first: 12) { title } last: books(last: 2) { title } } }'));
    expect(all.author.books).toHaveLength(12);
    expect(all.author.last).toEqual([{ title: 'Austen 11' }, { title: 'Austen 12' }]);
  });

  it('the schema says so: relation lists default to 10, top-level lists to 100', async () => {
    type Field = { name: string; description: string | null; args: { name: string; description: string | null }[] };
    const query = '{ author: __type(name: "Author") { fields { name description args { name description } } } query: __type(name: "Query") { fields { name description args { name description } } } }';
    const data = dataOf(await graphql<{ author: { fields: Field[] }; query: { fields: Field[] } }>(t.app, query));
    const field = (fields: Field[], name: string): Field => fields.find((f) => f.name === name) ?? ({} as Field);
    const firstOf = (f: Field): string | null | undefined => f.args.find((a) => a.name === 'first')?.description;
    for (const name of ['books', 'booksConnection']) {
      expect(field(data.author.fields, name).description).toContain('10 rows unless first or last says otherwise');
      expect(firstOf(field(data.author.fields, name))).toBe('The first n (default 10, at most 1000).');
    }
    expect(firstOf(field(data.query.fields, 'authors'))).toBe('The first n (default 100, at most 1000).');
    const sdl = (await t.app.inject({ method: 'GET', url: '/graphql/schema.graphql' })).body;
    expect(sdl).toContain('The first n (default 10, at most 1000).');
  });

  it('the three-level query counts 100 + 100 × 10 + 100 × 10 × 10 = 11100 objects', async () => {
    const strict = await startTestApp({ schema: SCHEMA, graphql: { maxCost: 11_099 } });
    try {
      const error = onlyError(await graphql(strict.app, THREE_LEVELS), 'query-too-complex');
      expect(error.extensions).toEqual({ code: 'query-too-complex', status: 400, limit: 'maxCost', actual: 11_100, max: 11_099, field: 'authors' });
    } finally {
      await strict.close();
    }
  });

  it('relationPageSize sets the page of relation lists, and the cost follows it', async () => {
    const small = await startTestApp({ schema: SCHEMA, graphql: { relationPageSize: 3, maxCost: 1_299 } });
    try {
      const austen = await small.app.inject({ method: 'POST', url: '/authors', payload: { name: 'Austen' } });
      for (const n of range(1, 4)) await small.app.inject({ method: 'POST', url: '/books', payload: { title: `Austen ${n}`, authorId: austen.json<{ id: number }>().id } });
      const data = dataOf(await graphql(small.app, '{ authors(first: 3) { books { title } } }'));
      expect(data).toEqual({ authors: [{ books: range(1, 3).map((n) => ({ title: `Austen ${n}` })) }] });
      // 100 + 100 × 3 + 100 × 3 × 3
      expect(onlyError(await graphql(small.app, THREE_LEVELS), 'query-too-complex').extensions).toMatchObject({ limit: 'maxCost', actual: 1300, max: 1299 });
    } finally {
      await small.close();
    }
  });
});

describe('bombs are still refused, naming the field whose first: would help most', () => {
  it('first: 1000 at each of three levels: the deepest of the equal pages', async () => {
    const error = onlyError(await graphql(t.app, '{ authors(first: 1000) { books(first: 1000) { reviews(first: 1000) { stars } } } }'), 'query-too-complex');
    costRefusal(error, 1_001_001_000, 'authors.books.reviews');
    expect(error.message).toBe(
      'The query may return 1001001000 objects; at most 50000 are allowed. Most would come from authors.books.reviews (authors 1000 × books 1000 × reviews 1000 = 1000000000); ' +
        'a smaller first: (or last:) on authors.books.reviews would help most, paging on with after:. A list field counts its first/last, or without them 100 at the top level and 10 as a relation of another object.',
    );
  });

  it('a large page deep down is named, not the top-level list', async () => {
    const error = onlyError(await graphql(t.app, '{ authors(first: 100) { books(first: 5) { reviews(first: 1000) { stars } } } }'), 'query-too-complex');
    costRefusal(error, 100 + 500 + 500_000, 'authors.books.reviews');
  });

  it('a large top-level page over default nested pages names the top-level list', async () => {
    const error = onlyError(await graphql(t.app, '{ authors(first: 1000) { books { reviews { stars } } } }'), 'query-too-complex');
    costRefusal(error, 1000 + 10_000 + 100_000, 'authors');
  });

  it('aliases repeating the three-level query add up, and the path names the alias', async () => {
    const five = `{ ${['a', 'b', 'c', 'd', 'e'].map((alias) => `${alias}: authors { books { reviews { stars } } }`).join(' ')} }`;
    costRefusal(onlyError(await graphql(t.app, five), 'query-too-complex'), 5 * 11_100, 'a');
  });

  it('through fragments and connections, the path is the response path', async () => {
    const query =
      '{ authorsConnection(first: 100) { nodes { ...Books } } } fragment Books on Author { booksConnection(first: 5) { edges { node { reviews(first: 1000) { stars } } } } }';
    costRefusal(onlyError(await graphql(t.app, query), 'query-too-complex'), 100 + 500 + 500_000, 'authorsConnection.nodes.booksConnection.edges.node.reviews');
  });

  it('nested deeper with the default pages: refused', async () => {
    const query = '{ authors { books { reviews { book { author { books { reviews { stars } } } } } } } }';
    costRefusal(onlyError(await graphql(t.app, query), 'query-too-complex'), 100 + 1000 + 10_000 + 10_000 + 10_000 + 100_000 + 1_000_000, 'authors');
  });
});
