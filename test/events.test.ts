import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventOf, eventsUrl, listenApp, replay, send, SseReader, tempDatabase, type ListeningApp, type Row, type StreamEvent } from './helpers/event-stream.js';

/**
 * The transactional outbox (issue 5) seen through GET /v1/events on a real socket: every committed
 * create, update and delete — REST and GraphQL, cascades and set-null included — has exactly one
 * event with the object as REST returns it (and the previous values of what changed), and no
 * rejected write has any. Then the stream's filters, parameter errors and access rules.
 *
 * Each check replays the outbox as admin (Last-Event-ID) up to a sentinel write made after the
 * writes under test: events are delivered in id order, so every event of those writes (and any
 * stray one) comes before the sentinel's.
 */

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_TYPES = ['user', 'post', 'product', 'order'].flatMap((r) => [`${r}.created`, `${r}.updated`, `${r}.deleted`]);

interface ExpectedEvent {
  type: string;
  data: { object: Row; previous?: Record<string, unknown> };
}

const created = (resource: string, object: Row): ExpectedEvent => ({ type: `${resource}.created`, data: { object } });
const updated = (resource: string, object: Row, previous: Record<string, unknown>): ExpectedEvent => ({ type: `${resource}.updated`, data: { object, previous } });
const deleted = (resource: string, object: Row): ExpectedEvent => ({ type: `${resource}.deleted`, data: { object } });

function must<T>(value: T | undefined | null, what = 'value'): T {
  if (value === undefined || value === null) throw new Error(`missing ${what}`);
  return value;
}

/** The parts of events a test compares: type and data, in stream order. */
const shapes = (events: readonly StreamEvent[]): ExpectedEvent[] => events.map((e) => ({ type: e.type, data: e.body.data }));

/**
 * Checks what every event frame must hold: `id:` = body.id, `event:` = body.type, an ISO timestamp
 * within the test's time, the exact wire format, ids strictly increasing.
 */
function expectWellFormed(events: readonly StreamEvent[], since: number): void {
  let last = 0;
  for (const event of events) {
    expect(event.id).toBeGreaterThan(last);
    last = event.id;
    expect(event.body.id).toBe(String(event.id));
    expect(event.body.type).toBe(event.type);
    expect(event.body.timestamp).toMatch(ISO);
    expect(Date.parse(event.body.timestamp)).toBeGreaterThanOrEqual(since - 1000);
    expect(Date.parse(event.body.timestamp)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(Object.keys(event.body)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(event.text).toBe(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.body)}\n\n`);
  }
}

describe('the outbox: one event per committed change, none for rejected writes', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  /** Id of the last sentinel event: each test reads the events after it. */
  let mark = 0;
  let sentinels = 0;
  const started = Date.now();

  const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => send(server.base, method, path, body, headers);
  async function ok(method: string, path: string, body: unknown, status: number, headers: Record<string, string> = {}): Promise<Row> {
    const response = await rest(method, path, body, headers);
    expect(response.status, response.text).toBe(status);
    return status === 204 ? { id: 0 } : response.json();
  }
  async function get(path: string): Promise<Row> {
    return ok('GET', path, undefined, 200);
  }
  async function problem(method: string, path: string, body: unknown, status: number, code: string, headers: Record<string, string> = {}): Promise<void> {
    const response = await rest(method, path, body, headers);
    expect(response.status, response.text).toBe(status);
    expect(response.headers.get('content-type')).toBe(PROBLEM_TYPE);
    expect(response.json()).toMatchObject({ code, status });
  }
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed parse at the test edge
  async function gql<D = Record<string, Row>>(query: string, variables: Record<string, unknown> = {}): Promise<{ data: D | null; errors?: { extensions: { code: string } }[] }> {
    const response = await rest('POST', '/graphql', { query, variables }, { accept: 'application/json' });
    return response.json();
  }

  /** Runs `writes`, then a sentinel write, and returns the events in between (well-formed, in order). */
  async function eventsOf(writes: () => Promise<void>): Promise<StreamEvent[]> {
    await sentinel();
    await writes();
    return (await sentinel()).slice(0, -1);
  }

  /** Writes a sentinel product and returns the events since the last one (it included). */
  async function sentinel(): Promise<StreamEvent[]> {
    const sku = `SENTINEL-${++sentinels}`;
    const product = await ok('POST', '/products', { name: 'Sentinel', sku, price: 1 }, 201);
    const events = await replay(server.base, eventOf('product.created', product.id), mark);
    expectWellFormed(events, started);
    expect(events.at(-1)?.body.data.object).toEqual(product);
    mark = must(events.at(-1)).id;
    return events;
  }

  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url);
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  it('a fresh database has no events: the stream says "last event id 0" and replays nothing before the first write', async () => {
    const reader = await SseReader.open(eventsUrl(server.base), { 'last-event-id': '0' });
    try {
      expect(reader.status).toBe(200);
      expect(reader.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(reader.response.headers['cache-control']).toBe('no-cache, no-transform');
      await reader.waitFor((r) => r.comments.length > 0, 'the connected comment');
      expect(reader.retry).toBe(3000);
      expect(reader.comments).toEqual(['connected; last event id 0']);
      expect(reader.text).toBe('retry: 3000\n: connected; last event id 0\n\n');
      const user = await ok('POST', '/users', { name: 'First' }, 201);
      await reader.until(eventOf('user.created', user.id));
      expect(reader.text.startsWith('retry: 3000\n: connected; last event id 0\n\n')).toBe(true);
      expect(shapes(reader.events)).toStrictEqual([created('user', user)]);
      expect(reader.events[0]?.id).toBe(1);
      expect(reader.malformed).toEqual([]);
      mark = 1;
    } finally {
      reader.close();
    }
  });

  it('REST create, PATCH, PUT and DELETE: object as REST returns it, previous = old values of the changed fields (updatedAt included)', async () => {
    let ada: Row = { id: 0 };
    let patched: Row = { id: 0 };
    let replaced: Row = { id: 0 };
    const events = await eventsOf(async () => {
      ada = await ok('POST', '/users', { name: 'Ada', email: 'ada@example.com' }, 201);
      patched = await ok('PATCH', `/users/${ada.id}`, { bio: 'Mathematician' }, 200);
      replaced = await ok('PUT', `/v1/users/${ada.id}`, { name: 'Ada L.', email: 'ada@example.com' }, 200);
    });
    expect(ada.bio).toBeNull();
    expect(shapes(events)).toStrictEqual([
      created('user', ada),
      updated('user', patched, { bio: null, updatedAt: ada.updatedAt }),
      updated('user', replaced, { name: 'Ada', bio: 'Mathematician', updatedAt: patched.updatedAt }),
    ]);
    expect(replaced).toEqual(await get(`/users/${ada.id}`));

    const gone = await eventsOf(async () => {
      await ok('DELETE', `/users/${ada.id}`, undefined, 204);
    });
    expect(shapes(gone)).toStrictEqual([deleted('user', replaced)]);
  });

  it('JSON fields: PATCH merges (previous holds the whole old value), GraphQL update replaces', async () => {
    const author = await ok('POST', '/users', { name: 'Tagger' }, 201);
    let post: Row = { id: 0 };
    let merged: Row = { id: 0 };
    let replacedTags: Row = { id: 0 };
    const events = await eventsOf(async () => {
      post = await ok('POST', '/posts', { title: 'Tags', userId: author.id, tags: { a: 1, b: 2 } }, 201);
      merged = await ok('PATCH', `/posts/${post.id}`, { tags: { b: null, c: 3 } }, 200);
      const reply = await gql<{ updatePost: { id: string } }>('mutation($id: ID!) { updatePost(id: $id, input: { tags: { x: 1 } }) { id } }', { id: String(post.id) });
      expect(reply.errors).toBeUndefined();
      replacedTags = await get(`/posts/${post.id}`);
    });
    expect(merged.tags).toEqual({ a: 1, c: 3 });
    expect(replacedTags.tags).toEqual({ x: 1 });
    expect(shapes(events)).toStrictEqual([
      created('post', post),
      updated('post', merged, { tags: { a: 1, b: 2 }, updatedAt: post.updatedAt }),
      updated('post', replacedTags, { tags: { a: 1, c: 3 }, updatedAt: merged.updatedAt }),
    ]);
  });

  it('GraphQL createUser, updateUser, replaceUser and deleteUser emit the same events as REST', async () => {
    const snapshots: Row[] = [];
    const events = await eventsOf(async () => {
      const made = await gql<{ createUser: { id: string } }>('mutation { createUser(input: { name: "Grace", email: "grace@example.com" }) { id } }');
      const id = must(made.data?.createUser.id);
      snapshots.push(await get(`/users/${id}`));
      expect((await gql('mutation($id: ID!) { updateUser(id: $id, input: { bio: "Admiral" }) { id } }', { id })).errors).toBeUndefined();
      snapshots.push(await get(`/users/${id}`));
      expect((await gql('mutation($id: ID!) { replaceUser(id: $id, input: { name: "Grace H." }) { id } }', { id })).errors).toBeUndefined();
      snapshots.push(await get(`/users/${id}`));
      expect((await gql<{ deleteUser: string }>('mutation($id: ID!) { deleteUser(id: $id) }', { id })).data).toEqual({ deleteUser: id });
    });
    const [first, second, third] = [must(snapshots[0]), must(snapshots[1]), must(snapshots[2])];
    expect(third).toMatchObject({ name: 'Grace H.', email: null, bio: null });
    expect(shapes(events)).toStrictEqual([
      created('user', first),
      updated('user', second, { bio: null, updatedAt: first.updatedAt }),
      updated('user', third, { name: 'Grace', email: 'grace@example.com', bio: 'Admiral', updatedAt: second.updatedAt }),
      deleted('user', third),
    ]);
  });

  it('deleting a user cascades to its posts (onDelete: cascade): post.deleted for each, before user.deleted', async () => {
    const user = await ok('POST', '/users', { name: 'Cascade' }, 201);
    const posts = [
      await ok('POST', '/posts', { title: 'One', userId: user.id }, 201),
      await ok('POST', '/posts', { title: 'Two', userId: user.id, body: 'second' }, 201),
    ];
    const other = await ok('POST', '/posts', { title: 'Someone else', userId: (await ok('POST', '/users', { name: 'Other' }, 201)).id }, 201);
    const events = await eventsOf(async () => {
      await ok('DELETE', `/users/${user.id}`, undefined, 204);
    });
    expect(shapes(events)).toStrictEqual([deleted('post', must(posts[0])), deleted('post', must(posts[1])), deleted('user', user)]);
    expect(await get(`/posts/${other.id}`)).toEqual(other);
  });

  it('rejected writes of every kind leave no event: 422, 409 unique, 412 If-Match, 409 restrict (after cascading), 403, 401, 404', async () => {
    const owner = await ok('POST', '/users', { name: 'Owner', email: 'owner@example.com' }, 201);
    const buyer = await ok('POST', '/users', { name: 'Buyer', email: 'buyer@example.com' }, 201);
    const product = await ok('POST', '/products', { name: 'Widget', sku: 'WIDGET-1', price: 5 }, 201);
    const order = await ok('POST', '/orders', { userId: buyer.id, productId: product.id, quantity: 1 }, 201);
    const buyersPost = await ok('POST', '/posts', { title: 'Buyer writes', userId: buyer.id }, 201);
    const tokenResponse = await ok('POST', '/v1/tokens', { name: 'owner posts', scopes: ['posts:write', 'users:read'], subject: String(owner.id) }, 201);
    const ownerKey = `Bearer ${String(tokenResponse.key)}`;
    const userTag = (await rest('GET', `/users/${owner.id}`)).headers.get('etag');
    expect(userTag).toMatch(/^"/);
    const stale = { 'if-match': '"not-the-current-tag"' };

    const events = await eventsOf(async () => {
      await problem('POST', '/users', {}, 422, 'validation-failed');
      await problem('POST', '/users', { name: 'Dup', email: 'owner@example.com' }, 409, 'unique-conflict');
      await problem('PATCH', `/users/${buyer.id}`, { email: 'owner@example.com' }, 409, 'unique-conflict');
      await problem('PUT', `/users/${buyer.id}`, { name: 'Buyer', email: 'owner@example.com' }, 409, 'unique-conflict');
      await problem('PATCH', `/users/${owner.id}`, { name: '' }, 422, 'validation-failed');
      await problem('POST', '/orders', { userId: buyer.id, productId: 99_999, quantity: 1 }, 422, 'validation-failed');
      await problem('PATCH', `/orders/${order.id}`, { quantity: 0 }, 422, 'validation-failed');
      await problem('PATCH', `/users/${owner.id}`, { bio: 'stale' }, 412, 'precondition-failed', stale);
      await problem('PUT', `/users/${owner.id}`, { name: 'Stale' }, 412, 'precondition-failed', stale);
      await problem('DELETE', `/users/${owner.id}`, undefined, 412, 'precondition-failed', stale);
      // buyer has a post (cascade, deleted first inside the transaction) and an order (restrict).
      await problem('DELETE', `/users/${buyer.id}`, undefined, 409, 'reference-conflict');
      await problem('DELETE', `/products/${product.id}`, undefined, 409, 'reference-conflict');
      await problem('PATCH', `/posts/${buyersPost.id}`, { title: 'Not mine' }, 403, 'forbidden', { authorization: ownerKey });
      await problem('DELETE', `/posts/${buyersPost.id}`, undefined, 403, 'forbidden', { authorization: ownerKey });
      await problem('POST', '/posts', { title: 'For the buyer', userId: buyer.id }, 403, 'forbidden', { authorization: ownerKey });
      await problem('POST', '/users', { name: 'No scope' }, 403, 'forbidden', { authorization: ownerKey });
      await problem('POST', '/users', { name: 'Anonymous' }, 401, 'authentication-required', { authorization: '' });
      await problem('PATCH', '/users/99999', { bio: 'nobody' }, 404, 'not-found');
      await problem('DELETE', '/users/99999', undefined, 404, 'not-found');
      const gqlErrors = [
        await gql('mutation { createUser(input: { name: "" }) { id } }'),
        await gql('mutation($id: ID!) { updateUser(id: $id, input: { email: "owner@example.com" }) { id } }', { id: String(buyer.id) }),
        await gql('mutation($id: ID!) { replaceUser(id: $id, input: { name: "B", email: "owner@example.com" }) { id } }', { id: String(buyer.id) }),
        await gql('mutation($id: ID!) { deleteUser(id: $id) }', { id: String(buyer.id) }),
        await gql('mutation($id: ID!) { deleteProduct(id: $id) }', { id: String(product.id) }),
      ];
      expect(gqlErrors.map((r) => r.errors?.map((e) => e.extensions.code))).toEqual([
        ['validation-failed'],
        ['unique-conflict'],
        ['unique-conflict'],
        ['reference-conflict'],
        ['reference-conflict'],
      ]);
    });
    expect(shapes(events)).toStrictEqual([]);
    // Nothing was changed either.
    expect(await get(`/posts/${buyersPost.id}`)).toEqual(buyersPost);
    expect(await get(`/users/${buyer.id}`)).toEqual(buyer);
  });

  it('an update that changes nothing emits nothing: PATCH with the same values, an empty PATCH, GraphQL update with the same values', async () => {
    const user = await ok('POST', '/users', { name: 'Still', bio: 'same' }, 201);
    const post = await ok('POST', '/posts', { title: 'Still', userId: user.id, tags: { a: 1 } }, 201);
    const events = await eventsOf(async () => {
      expect(await ok('PATCH', `/users/${user.id}`, { name: 'Still', bio: 'same' }, 200)).toEqual(user);
      expect(await ok('PATCH', `/users/${user.id}`, {}, 200)).toEqual(user);
      expect(await ok('PATCH', `/posts/${post.id}`, { tags: { a: 1 } }, 200)).toEqual(post);
      expect((await gql('mutation($id: ID!) { updateUser(id: $id, input: { name: "Still" }) { id } }', { id: String(user.id) })).errors).toBeUndefined();
    });
    expect(shapes(events)).toStrictEqual([]);
    expect(await get(`/users/${user.id}`)).toEqual(user);
  });

  it('an Idempotency-Key replay emits no second event (POST and PATCH)', async () => {
    let user: Row = { id: 0 };
    let patched: Row = { id: 0 };
    const events = await eventsOf(async () => {
      user = await ok('POST', '/users', { name: 'Once' }, 201, { 'idempotency-key': 'events-once-1' });
      const again = await rest('POST', '/users', { name: 'Once' }, { 'idempotency-key': 'events-once-1' });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      patched = await ok('PATCH', `/users/${user.id}`, { bio: 'once' }, 200, { 'idempotency-key': 'events-once-2' });
      const patchedAgain = await rest('PATCH', `/users/${user.id}`, { bio: 'once' }, { 'idempotency-key': 'events-once-2' });
      expect(patchedAgain.headers.get('idempotent-replayed')).toBe('true');
    });
    expect(shapes(events)).toStrictEqual([created('user', user), updated('user', patched, { bio: null, updatedAt: user.updatedAt })]);
  });

  it('orders and products: created, updated (enum and integer fields) and deleted', async () => {
    const buyer = await ok('POST', '/users', { name: 'Shopper' }, 201);
    let product: Row = { id: 0 };
    let restocked: Row = { id: 0 };
    let order: Row = { id: 0 };
    let paid: Row = { id: 0 };
    const events = await eventsOf(async () => {
      product = await ok('POST', '/products', { name: 'Gadget', sku: 'GADGET-1', price: 12.5, currency: 'USD' }, 201);
      order = await ok('POST', '/orders', { userId: buyer.id, productId: product.id, quantity: 2, placedOn: '2026-01-02' }, 201);
      paid = await ok('PATCH', `/orders/${order.id}`, { status: 'paid', quantity: 3 }, 200);
      await ok('DELETE', `/orders/${order.id}`, undefined, 204);
      restocked = await ok('PATCH', `/products/${product.id}`, { stock: 7 }, 200);
    });
    expect(shapes(events)).toStrictEqual([
      created('product', product),
      created('order', order),
      updated('order', paid, { quantity: 2, status: 'pending', updatedAt: order.updatedAt }),
      deleted('order', paid),
      updated('product', restocked, { stock: 0, updatedAt: product.updatedAt }),
    ]);
  });
});

describe('cascade and setNull chains (custom schema)', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  const rest = (method: string, path: string, body?: unknown) => send(server.base, method, path, body);
  async function ok(method: string, path: string, body: unknown, status: number): Promise<Row> {
    const response = await rest(method, path, body);
    expect(response.status, response.text).toBe(status);
    return status === 204 ? { id: 0 } : response.json();
  }

  beforeAll(async () => {
    db = await tempDatabase();
    const schemaFile = join(db.dir, 'library.yaml');
    writeFileSync(
      schemaFile,
      `
resources:
  authors:
    fields:
      name: { type: string, required: true }
  books:
    fields:
      title:    { type: string, required: true }
      authorId: { type: integer, references: authors, onDelete: setNull }
  chapters:
    fields:
      title:  { type: string, required: true }
      bookId: { type: integer, required: true, references: books, onDelete: cascade }
  notes:
    fields:
      text:      { type: string, required: true }
      chapterId: { type: integer, references: chapters, onDelete: setNull }
`,
    );
    server = await listenApp(db.url, { schema: schemaFile });
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  it('setNull emits x.updated for each affected row (previous: the reference and updatedAt) before the parent’s deleted; cascade nests', async () => {
    const author = await ok('POST', '/authors', { name: 'Author' }, 201);
    const otherAuthor = await ok('POST', '/authors', { name: 'Other author' }, 201);
    const books = [await ok('POST', '/books', { title: 'B1', authorId: author.id }, 201), await ok('POST', '/books', { title: 'B2', authorId: author.id }, 201)];
    const untouched = await ok('POST', '/books', { title: 'B3', authorId: otherAuthor.id }, 201);
    const b1 = must(books[0]);
    const chapters = [await ok('POST', '/chapters', { title: 'C1', bookId: b1.id }, 201), await ok('POST', '/chapters', { title: 'C2', bookId: b1.id }, 201)];
    const c1 = must(chapters[0]);
    const notes = [await ok('POST', '/notes', { text: 'N1', chapterId: c1.id }, 201), await ok('POST', '/notes', { text: 'N2', chapterId: c1.id }, 201)];
    const freeNote = await ok('POST', '/notes', { text: 'N3' }, 201);
    const before = await replay(server.base, eventOf('note.created', freeNote.id));
    const mark = must(before.at(-1)).id;

    await ok('DELETE', `/authors/${author.id}`, undefined, 204);
    await ok('DELETE', `/books/${b1.id}`, undefined, 204);
    const sentinel = await ok('POST', '/authors', { name: 'Sentinel' }, 201);
    const events = await replay(server.base, eventOf('author.created', sentinel.id), mark);

    expect((await rest('GET', `/books/${b1.id}`)).status).toBe(404);
    const b2After = await ok('GET', `/books/${must(books[1]).id}`, undefined, 200);
    const notesAfter = [await ok('GET', `/notes/${must(notes[0]).id}`, undefined, 200), await ok('GET', `/notes/${must(notes[1]).id}`, undefined, 200)];
    expect(b2After.authorId).toBeNull();
    expect(notesAfter.map((n) => n.chapterId)).toEqual([null, null]);
    expect(await ok('GET', `/books/${untouched.id}`, undefined, 200)).toEqual(untouched);

    const shape = shapes(events);
    // B1 was set to null by the author's deletion, then deleted: its deleted object has authorId null.
    const b1Nulled = must(shape[0]).data.object;
    expect(shape).toStrictEqual([
      updated('book', b1Nulled, { authorId: author.id, updatedAt: b1.updatedAt }),
      updated('book', b2After, { authorId: author.id, updatedAt: must(books[1]).updatedAt }),
      deleted('author', author),
      updated('note', must(notesAfter[0]), { chapterId: c1.id, updatedAt: must(notes[0]).updatedAt }),
      updated('note', must(notesAfter[1]), { chapterId: c1.id, updatedAt: must(notes[1]).updatedAt }),
      deleted('chapter', c1),
      deleted('chapter', must(chapters[1])),
      deleted('book', b1Nulled),
      created('author', sentinel),
    ]);
    expect(b1Nulled).toEqual({ ...b1, authorId: null, updatedAt: b1Nulled.updatedAt });
    expect(b1Nulled.updatedAt).not.toBe(b1.updatedAt);
  });

  it('a row set to null gets an updatedAt later than it had, also one ahead of the clock', async () => {
    const author = await ok('POST', '/authors', { name: 'Soon gone' }, 201);
    const book = await ok('POST', '/books', { title: 'Kept', authorId: author.id }, 201);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await db.db.run('update "books" set "updatedAt" = ? where "id" = ?', [future, book.id])).toBe(1);
    await ok('DELETE', `/authors/${author.id}`, undefined, 204);
    const after = await ok('GET', `/books/${book.id}`, undefined, 200);
    expect(after).toEqual({ ...book, authorId: null, updatedAt: new Date(Date.parse(future) + 1).toISOString() });
  });
});

describe('filters, parameter errors and access', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  /** Every event of the writes below, as admin replays them. */
  let all: StreamEvent[] = [];
  let users: Row[] = [];
  const keys = new Map<string, string>();
  /** Streams opened before the writes (live delivery, no Last-Event-ID), by name. */
  const live = new Map<string, SseReader>();

  const rest = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => send(server.base, method, path, body, headers);
  async function ok(method: string, path: string, body: unknown, status: number): Promise<Row> {
    const response = await rest(method, path, body);
    expect(response.status, response.text).toBe(status);
    return status === 204 ? { id: 0 } : response.json();
  }
  async function key(name: string, scopes: string[], subject?: string): Promise<string> {
    const token = await ok('POST', '/v1/tokens', { name, scopes, ...(subject === undefined ? {} : { subject }) }, 201);
    const value = `Bearer ${String(token.key)}`;
    keys.set(name, value);
    return value;
  }
  const auth = (name: string): string => must(keys.get(name), `key ${name}`);

  /** The principals and filters under test, with which events of `all` each must see. */
  const viewers: { name: string; headers: () => Record<string, string>; query: Record<string, string>; sees: (e: StreamEvent) => boolean }[] = [
    { name: 'admin', headers: () => ({}), query: {}, sees: () => true },
    { name: 'anonymous', headers: () => ({ authorization: '' }), query: {}, sees: (e) => e.type.startsWith('post.') || e.type.startsWith('product.') },
    { name: 'anonymous, posts only', headers: () => ({ authorization: '' }), query: { types: 'post.created,post.updated,post.deleted,product.created' }, sees: (e) => e.type.startsWith('post.') || e.type === 'product.created' },
    {
      name: 'orders key, subject = user 5',
      headers: () => ({ authorization: auth('owner5') }),
      query: {},
      sees: (e) => e.type.startsWith('post.') || e.type.startsWith('product.') || (e.type.startsWith('order.') && e.body.data.object.userId === users[4]?.id),
    },
    {
      name: 'orders key, subject = user 5, order types',
      headers: () => ({ authorization: auth('owner5') }),
      query: { types: 'order.created,order.updated,order.deleted,product.created' },
      sees: (e) => e.type === 'product.created' || (e.type.startsWith('order.') && e.body.data.object.userId === users[4]?.id),
    },
    { name: 'orders key without subject', headers: () => ({ authorization: auth('ordersNoSubject') }), query: {}, sees: (e) => e.type.startsWith('post.') || e.type.startsWith('product.') },
    { name: 'users key', headers: () => ({ authorization: auth('usersReader') }), query: {}, sees: (e) => !e.type.startsWith('order.') },
    { name: 'admin, types with spaces and repeats', headers: () => ({}), query: { types: 'user.created, post.deleted ,user.created,product.created' }, sees: (e) => ['user.created', 'post.deleted', 'product.created'].includes(e.type) },
  ];

  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url);
    await key('owner5', ['orders:read'], '5');
    await key('ordersNoSubject', ['orders:read', 'orders:write']);
    await key('usersReader', ['users:read']);
    await key('postsWriter', ['posts:write']);
    for (const viewer of viewers) {
      const reader = await SseReader.open(eventsUrl(server.base, viewer.query), viewer.headers());
      expect(reader.status, viewer.name).toBe(200);
      live.set(viewer.name, reader);
    }
    for (const viewer of viewers) await must(live.get(viewer.name)).waitFor((r) => r.comments.length > 0, `${viewer.name} connected`);

    users = [];
    for (let i = 1; i <= 6; i++) users.push(await ok('POST', '/users', { name: `User ${i}` }, 201));
    expect(users.map((u) => u.id)).toEqual([1, 2, 3, 4, 5, 6]);
    const product = await ok('POST', '/products', { name: 'Thing', sku: 'THING-1', price: 3 }, 201);
    const orders: Row[] = [];
    for (const owner of [5, 6, 5, 6]) orders.push(await ok('POST', '/orders', { userId: owner, productId: product.id, quantity: 1 }, 201));
    await ok('PATCH', `/orders/${must(orders[0]).id}`, { status: 'paid' }, 200);
    await ok('PATCH', `/orders/${must(orders[1]).id}`, { status: 'paid' }, 200);
    await ok('DELETE', `/orders/${must(orders[2]).id}`, undefined, 204);
    await ok('DELETE', `/orders/${must(orders[3]).id}`, undefined, 204);
    const post5 = await ok('POST', '/posts', { title: 'By 5', userId: 5 }, 201);
    const post6 = await ok('POST', '/posts', { title: 'By 6', userId: 6 }, 201);
    await ok('PATCH', `/posts/${post6.id}`, { published: true }, 200);
    await ok('DELETE', `/posts/${post5.id}`, undefined, 204);
    await ok('PATCH', `/users/6`, { bio: 'six' }, 200);
    await ok('PATCH', `/products/${product.id}`, { stock: 1 }, 200);
    const sentinel = await ok('POST', '/products', { name: 'Sentinel', sku: 'SENTINEL-ACCESS', price: 1 }, 201);
    all = await replay(server.base, eventOf('product.created', sentinel.id));
    expect(all.map((e) => e.type)).toEqual([
      ...Array<string>(6).fill('user.created'),
      'product.created',
      ...Array<string>(4).fill('order.created'),
      'order.updated',
      'order.updated',
      'order.deleted',
      'order.deleted',
      'post.created',
      'post.created',
      'post.updated',
      'post.deleted',
      'user.updated',
      'product.updated',
      'product.created',
    ]);
  });
  afterAll(async () => {
    for (const reader of live.values()) reader.close();
    await server.close();
    await db.cleanup();
  });

  for (const viewer of viewers) {
    it(`${viewer.name}: replay from 0 and the live stream carry exactly the events it may read`, async () => {
      const expected = all.filter(viewer.sees).map((e) => e.id);
      expect(expected.at(-1)).toBe(all.at(-1)?.id);
      const replayed = await replay(server.base, (e) => e.id === all.at(-1)?.id, 0, viewer.headers());
      const url = eventsUrl(server.base, viewer.query);
      const filtered = url.includes('?') ? await (async () => {
        const reader = await SseReader.open(`${url}&lastEventId=0`, viewer.headers());
        try {
          return await reader.until((e) => e.id === all.at(-1)?.id);
        } finally {
          reader.close();
        }
      })() : replayed;
      expect(filtered.map((e) => e.id)).toEqual(expected);
      const reader = must(live.get(viewer.name));
      await reader.until((e) => e.id === all.at(-1)?.id);
      expect(reader.ids).toEqual(expected);
      // The same frames, byte for byte, as the admin's.
      const byId = new Map(all.map((e) => [e.id, e.text]));
      expect(reader.events.map((e) => e.text)).toEqual(expected.map((id) => byId.get(id)));
    });
  }

  it('the owner rule is not vacuous here: user 5 has created, updated and deleted orders, user 6 too', () => {
    const orderEvents = all.filter((e) => e.type.startsWith('order.'));
    expect(orderEvents.filter((e) => e.body.data.object.userId === 5).map((e) => e.type)).toEqual(['order.created', 'order.created', 'order.updated', 'order.deleted']);
    expect(orderEvents.filter((e) => e.body.data.object.userId === 6).map((e) => e.type)).toEqual(['order.created', 'order.created', 'order.updated', 'order.deleted']);
  });

  async function expectProblem(query: string, headers: Record<string, string>, status: number, code: string, errors?: unknown[], wwwAuthenticate?: string | RegExp): Promise<void> {
    const response = await rest('GET', `/v1/events${query}`, undefined, { accept: 'text/event-stream', ...headers });
    expect(response.status, response.text).toBe(status);
    expect(response.headers.get('content-type')).toBe(PROBLEM_TYPE);
    const body = response.json<Record<string, unknown>>();
    expect(body).toMatchObject({ type: `urn:restgraph:problem:${code}`, code, status, instance: '/v1/events' });
    if (errors !== undefined) expect(body.errors).toEqual(errors);
    else expect(body.errors).toBeUndefined();
    const challenge = response.headers.get('www-authenticate');
    if (wwwAuthenticate === undefined) expect(challenge).toBeNull();
    else if (typeof wwwAuthenticate === 'string') expect(challenge).toBe(wwwAuthenticate);
    else expect(challenge).toMatch(wwwAuthenticate);
  }

  const typeList = ALL_TYPES.join(', ');
  const notAType = (type: string) => ({ parameter: 'types', detail: `"${type}" is not an event type (they are ${typeList})` });
  const badId = { parameter: 'lastEventId', detail: 'must be an event id (a non-negative integer)' };
  const badHeader = { header: 'Last-Event-ID', detail: 'must be an event id (a non-negative integer)' };
  const badQueries: [string, string, Record<string, string>, unknown[]][] = [
    ['an unknown type', '?types=user.exploded', {}, [notAType('user.exploded')]],
    ['a plural resource name', '?types=users.created', {}, [notAType('users.created')]],
    ['one unknown among known types', '?types=user.created,order.shipped', {}, [notAType('order.shipped')]],
    ['an empty types', '?types=', {}, [{ parameter: 'types', detail: 'names no event type' }]],
    ['only commas', '?types=,,', {}, [{ parameter: 'types', detail: 'names no event type' }]],
    ['an unknown parameter', '?limit=10', {}, [{ parameter: 'limit', detail: 'is not a parameter of the event stream (it takes types, filter and lastEventId)' }]],
    ['lastEventId not a number', '?lastEventId=abc', {}, [badId]],
    ['lastEventId negative', '?lastEventId=-1', {}, [badId]],
    ['lastEventId fractional', '?lastEventId=1.5', {}, [badId]],
    ['lastEventId in exponent form', '?lastEventId=1e3', {}, [badId]],
    ['lastEventId empty', '?lastEventId=', {}, [badId]],
    ['Last-Event-ID header not a number', '', { 'last-event-id': 'abc' }, [badHeader]],
    ['Last-Event-ID header negative', '', { 'last-event-id': '-5' }, [badHeader]],
    [
      'everything wrong at once (all reported)',
      '?types=nope&since=1&lastEventId=x',
      {},
      [{ parameter: 'since', detail: 'is not a parameter of the event stream (it takes types, filter and lastEventId)' }, notAType('nope'), badId],
    ],
  ];
  for (const [what, query, headers, errors] of badQueries) {
    it(`400 invalid-query: ${what}`, async () => {
      await expectProblem(query, headers, 400, 'invalid-query', errors);
    });
  }

  it('Accept that rules out text/event-stream → 406 not-acceptable', async () => {
    await expectProblem('', { accept: 'application/json' }, 406, 'not-acceptable');
  });

  it('anonymous asking for order or user events → 401 with the Bearer challenge; for post events → 200', async () => {
    await expectProblem('?types=order.created', { authorization: '' }, 401, 'authentication-required', undefined, 'Bearer realm="restgraph"');
    await expectProblem('?types=post.created,user.deleted', { authorization: '' }, 401, 'authentication-required', undefined, 'Bearer realm="restgraph"');
    const reader = await SseReader.open(eventsUrl(server.base, { types: 'post.created' }), { authorization: '' });
    expect(reader.status).toBe(200);
    reader.close();
  });

  it('a key without the orders scope asking for order events → 403 insufficient_scope naming the scopes that would do', async () => {
    await expectProblem('?types=order.updated', { authorization: auth('usersReader') }, 403, 'forbidden', undefined, 'Bearer realm="restgraph", error="insufficient_scope", scope="orders:read orders:write"');
    await expectProblem('?types=user.created', { authorization: auth('postsWriter') }, 403, 'forbidden', undefined, 'Bearer realm="restgraph", error="insufficient_scope", scope="users:read users:write"');
  });

  it('a bad token → 401 invalid-token, with or without types', async () => {
    await expectProblem('', { authorization: 'Bearer rg_not-a-real-key' }, 401, 'invalid-token', undefined, /^Bearer realm="restgraph", error="invalid_token"/);
    await expectProblem('?types=post.created', { authorization: 'Bearer rg_not-a-real-key' }, 401, 'invalid-token', undefined, /^Bearer realm="restgraph", error="invalid_token"/);
  });

  it('Last-Event-ID and lastEventId replay what follows that id; the header wins over the parameter', async () => {
    const middle = must(all[10]).id;
    const fromHeader = await replay(server.base, (e) => e.id === all.at(-1)?.id, middle);
    expect(fromHeader.map((e) => e.id)).toEqual(all.slice(11).map((e) => e.id));
    const reader = await SseReader.open(eventsUrl(server.base, { lastEventId: String(middle) }), { 'last-event-id': String(must(all[20]).id) });
    try {
      await reader.until((e) => e.id === all.at(-1)?.id);
      expect(reader.ids).toEqual(all.slice(21).map((e) => e.id));
    } finally {
      reader.close();
    }
  });

  it('without Last-Event-ID the stream starts live: nothing of the past, then new events', async () => {
    const reader = await SseReader.open(eventsUrl(server.base));
    try {
      await reader.waitFor((r) => r.comments.length > 0, 'connected');
      expect(reader.comments).toEqual([`connected; last event id ${String(all.at(-1)?.id)}`]);
      const user = await ok('POST', '/users', { name: 'Live' }, 201);
      await reader.until(eventOf('user.created', user.id));
      expect(shapes(reader.events)).toStrictEqual([created('user', user)]);
    } finally {
      reader.close();
    }
  });
});

describe('HTTP methods on /v1/events (HEAD and OPTIONS work everywhere; other methods are 405 with Allow)', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url);
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  it('OPTIONS → 204 with Allow: GET, HEAD, OPTIONS', async () => {
    const response = await send(server.base, 'OPTIONS', '/v1/events');
    expect(response.status, response.text).toBe(204);
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('a CORS preflight for GET with Authorization and Last-Event-ID is answered (as for /users)', async () => {
    const headers = { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, last-event-id' };
    const users = await send(server.base, 'OPTIONS', '/users', undefined, headers);
    expect(users.status).toBe(204);
    const response = await send(server.base, 'OPTIONS', '/v1/events', undefined, headers);
    expect(response.status, response.text).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('GET');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('last-event-id');
  });

  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    it(`${method} → 405 method-not-allowed with Allow`, async () => {
      const response = await send(server.base, method, '/v1/events', method === 'DELETE' ? undefined : {});
      expect(response.status, response.text).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      expect(response.json()).toMatchObject({ code: 'method-not-allowed', status: 405 });
    });
  }
});
