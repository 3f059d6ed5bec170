import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, eventsUrl, listenApp, send, SseReader, tempDatabase, waitUntil, type ListeningApp, type Row } from './helpers/event-stream.js';
import { codes, refusalOf, sseClient, subscriptionsEnded, wsClient, type Recorder, type SubscriptionClient, type TransportName } from './helpers/subscription-clients.js';

/**
 * Subscriptions with `where:` deliver only the events whose record matches (over graphql-ws and
 * graphql-sse), subscribers with different wheres are in different execution groups, owner rules
 * still hold; `GET /v1/events?types=…&filter=…` sends only the matching events, and a bad filter is
 * a 400 before the stream opens.
 */

describe('where: on subscriptions and filter= on the event stream', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  let author: Row;
  const clients: SubscriptionClient[] = [];
  const groups = (): number => server.app.restgraph.graphql.subscriptions.size;
  const active = (): number => server.app.restgraph.events.subscriberCount;

  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url, { apiKeyCacheMs: 0 });
    author = await create('/users', { name: 'Writer' });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.dispose();
    await subscriptionsEnded(server);
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  async function create(path: string, body: Record<string, unknown>, authorization = ADMIN): Promise<Row> {
    const response = await send(server.base, 'POST', path, body, { authorization });
    if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${response.text}`);
    return response.json();
  }

  function client(transport: TransportName, authorization = ADMIN): SubscriptionClient {
    const made = transport === 'graphql-ws' ? wsClient(server.base, { connectionParams: { Authorization: authorization }, lazy: false }) : sseClient(server.base, { headers: { authorization } });
    clients.push(made);
    return made;
  }

  /** Starts each operation on a client of its own and waits until all of them listen. */
  async function subscribe<D>(transport: TransportName, operations: readonly { query: string; variables?: Record<string, unknown> }[], authorization = ADMIN): Promise<Recorder<D>[]> {
    const before = active();
    const recorders = operations.map((op) => client(transport, authorization).run<D>(op.query, op.variables));
    await waitUntil(() => {
      const ended = recorders.find((r) => r.ended);
      if (ended !== undefined) throw new Error(`a subscription ended: ${ended.describe()}`);
      return active() === before + operations.length;
    }, `${operations.length} subscriptions to run`);
    return recorders;
  }

  for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
    it(`${transport}: postCreated(where:) gets only matching posts; different wheres are different groups`, async () => {
      const query = 'subscription ($w: PostWhere) { postCreated(where: $w) { title } }';
      const sqlite = { query, variables: { w: { title: { contains: 'SQLITE' } } } };
      const published = { query, variables: { w: { published: { eq: true } } } };
      const recorders = await subscribe<{ postCreated: { title: string } }>(transport, [sqlite, sqlite, published, { query: 'subscription { postCreated { title } }' }]);
      // The two with the same where share one group; the others have one each.
      expect(groups()).toBe(3);
      const metrics = await send(server.base, 'GET', '/metrics');
      expect(metrics.text).toMatch(/^restgraph_subscription_groups 3$/m);
      for (const [title, isPublished] of [[`About sqlite ${transport}`, false], [`Other ${transport}`, true], [`SQLite rocks ${transport}`, true]] as const) {
        await create('/posts', { title, published: isPublished, userId: author.id });
      }
      const [a, b, c, all] = recorders as [Recorder<{ postCreated: { title: string } }>, Recorder<{ postCreated: { title: string } }>, Recorder<{ postCreated: { title: string } }>, Recorder<{ postCreated: { title: string } }>];
      await all.waitForResults(3);
      await a.waitForResults(2);
      await b.waitForResults(2);
      await c.waitForResults(2);
      const titles = (r: Recorder<{ postCreated: { title: string } }>): string[] => r.data.map((d) => d.postCreated.title);
      expect(titles(a)).toEqual([`About sqlite ${transport}`, `SQLite rocks ${transport}`]);
      expect(titles(b)).toEqual(titles(a));
      expect(titles(c)).toEqual([`Other ${transport}`, `SQLite rocks ${transport}`]);
      expect(titles(all)).toHaveLength(3);
    });
  }

  it('postUpdated(where:) matches the record as updated, postDeleted(where:) the record deleted', async () => {
    const post = await create('/posts', { title: 'draft', userId: author.id });
    const other = await create('/posts', { title: 'keep', userId: author.id });
    const [updated, deleted] = await subscribe<Record<string, { id: string; title: string; published: boolean }>>('graphql-ws', [
      { query: 'subscription { postUpdated(where: { published: { eq: true } }) { id title published } }' },
      { query: 'subscription { postDeleted(where: { title: { startsWith: "dr" } }) { id title } }' },
    ]) as [Recorder<Record<string, { id: string; title: string; published: boolean }>>, Recorder<Record<string, { id: string; title: string; published: boolean }>>];
    expect((await send(server.base, 'PATCH', `/posts/${other.id}`, { title: 'kept' }, { authorization: ADMIN })).status).toBe(200);
    expect((await send(server.base, 'PATCH', `/posts/${post.id}`, { published: true }, { authorization: ADMIN })).status).toBe(200);
    expect((await send(server.base, 'DELETE', `/posts/${other.id}`, undefined, { authorization: ADMIN })).status).toBe(204);
    expect((await send(server.base, 'DELETE', `/posts/${post.id}`, undefined, { authorization: ADMIN })).status).toBe(204);
    await updated.waitForResults(1);
    await deleted.waitForResults(1);
    // The events that did not match came first: had they been delivered, they would be here.
    expect(updated.data).toEqual([{ postUpdated: { id: String(post.id), title: 'draft', published: true } }]);
    expect(deleted.data).toEqual([{ postDeleted: { id: String(post.id), title: 'draft' } }]);
  });

  it('a where never shows an event the owner rule hides', async () => {
    const product = await create('/products', { name: 'Thing', sku: 'THING-1', price: 3 });
    const other = await create('/users', { name: 'Other buyer' });
    const key = await create('/v1/tokens', { name: 'buyer', scopes: ['orders:read'], subject: String(author.id) });
    const query = 'subscription { orderCreated(where: { quantity: { gte: 2 } }) { quantity } }';
    const mine = await subscribe<{ orderCreated: { quantity: number } }>('graphql-sse', [{ query }], `Bearer ${String(key.key)}`);
    const admin = await subscribe<{ orderCreated: { quantity: number } }>('graphql-sse', [{ query }]);
    // The same operation under two visibilities: two groups.
    expect(groups()).toBe(2);
    await create('/orders', { userId: other.id, productId: product.id, quantity: 5 });
    await create('/orders', { userId: author.id, productId: product.id, quantity: 1 });
    await create('/orders', { userId: author.id, productId: product.id, quantity: 2 });
    const [m, a] = [mine[0], admin[0]] as [Recorder<{ orderCreated: { quantity: number } }>, Recorder<{ orderCreated: { quantity: number } }>];
    await a.waitForResults(2);
    await m.waitForResults(1);
    expect(a.data.map((d) => d.orderCreated.quantity)).toEqual([5, 2]);
    expect(m.data.map((d) => d.orderCreated.quantity)).toEqual([2]);
  });

  it('refuses relation paths and bad values in a subscription where, naming the path', async () => {
    for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
      const path = client(transport).run('subscription { postCreated(where: { user: { name: { eq: "Writer" } } }) { id } }');
      const errors = refusalOf(await path.waitForEnd());
      expect(codes(errors)).toEqual(['invalid-query']);
      expect(errors[0]?.message).toMatch(/^where\.user: relation paths cannot be followed in a subscription/);
      const value = client(transport).run('subscription { postUpdated(where: { publishedAt: { gt: "soon" } }) { id } }');
      const valueErrors = refusalOf(await value.waitForEnd());
      expect(codes(valueErrors)).toEqual(['invalid-query']);
      expect(valueErrors[0]?.message).toMatch(/^where\.publishedAt\.gt: "soon" is not an ISO 8601 date-time/);
    }
  });

  it('GET /v1/events?types=…&filter=… sends only the events whose record matches', async () => {
    const reader = await SseReader.open(eventsUrl(server.base, { types: 'post.created,post.updated', filter: "title ~ 'ÉLAN' and published = true" }));
    try {
      expect(reader.status).toBe(200);
      const quiet = await create('/posts', { title: 'élan, draft', userId: author.id });
      await create('/posts', { title: 'other', published: true, userId: author.id });
      await send(server.base, 'PATCH', `/posts/${quiet.id}`, { published: true }, { authorization: ADMIN });
      const events = await reader.until((e) => e.type === 'post.updated');
      expect(events.map((e) => [e.type, e.body.data.object.id])).toEqual([['post.updated', quiet.id]]);
    } finally {
      reader.close();
    }
  });

  it('a bad event stream filter is a 400 before the stream opens', async () => {
    const problem = async (query: Record<string, string>): Promise<string> => {
      const response = await send(server.base, 'GET', `/v1/events?${new URLSearchParams(query).toString()}`, undefined, { authorization: ADMIN, accept: 'text/event-stream' });
      expect(response.status, response.text).toBe(400);
      return response.json<{ errors: { detail: string }[] }>().errors[0]?.detail ?? '';
    };
    expect(await problem({ filter: 'title = 1' })).toMatch(/^needs types/);
    expect(await problem({ types: 'post.created', filter: "nmae = 'x'" })).toMatch(/^unknown field "nmae" at 0/);
    expect(await problem({ types: 'post.created', filter: "user.name = 'x'" })).toMatch(/relation paths \("user" at 0\) cannot be followed/);
    expect(await problem({ types: 'post.created,user.created', filter: "title = 'x'" })).toMatch(/for user\.created: the filter must apply to the records of every type given/);
    expect(await problem({ types: 'post.created', filter: '(((((((((title = 1)))))))))' })).toMatch(/nests deeper than 8 levels/);
    // A field every type's resource has is fine across resources.
    const both = await SseReader.open(eventsUrl(server.base, { types: 'post.created,user.created', filter: 'id > 0' }));
    expect(both.status).toBe(200);
    both.close();
  });
});
