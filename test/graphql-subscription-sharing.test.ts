import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp, type Row } from './helpers/event-stream.js';
import { BODY_ALIASES, codes, must, rawSubscriber, refusalOf, subscriptionsEnded, wsClient, type CloseLike, type Recorder, type SubscriptionClient } from './helpers/subscription-clients.js';

/**
 * Subscribers asking the same thing share one execution per event (issue: realtime at scale):
 * what is shared, and that sharing never shows a subscriber what its own credential may not read,
 * nor lets one slow client hold up the others.
 */

describe('GraphQL subscriptions that share their execution', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  const statements: string[] = [];
  const clients: SubscriptionClient[] = [];
  const track = (client: SubscriptionClient): SubscriptionClient => (clients.push(client), client);
  const active = (): number => server.app.restgraph.events.subscriberCount;

  beforeAll(async () => {
    db = await tempDatabase();
    // Credentials are checked again every 200 ms on open sockets, and keys are not cached.
    server = await listenApp(db.url, { events: { heartbeatMs: 200 }, apiKeyCacheMs: 0, onSqlStatement: (sql) => statements.push(sql) });
  });

  // Each test's clients end with it (also when it fails), so the next starts with none running.
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

  async function keyFor(scopes: string[], subject?: string): Promise<{ id: number; authorization: string }> {
    const token = await create('/v1/tokens', { name: `sharing ${scopes.join(' ')} ${subject ?? ''}`, scopes, ...(subject === undefined ? {} : { subject }) });
    return { id: token.id, authorization: `Bearer ${String(token.key)}` };
  }

  /** Starts `query` for each authorization, each on a socket of its own, and waits until all run. */
  async function subscribeAll<D>(query: string, authorizations: readonly string[]): Promise<Recorder<D>[]> {
    const before = active();
    const recorders = authorizations.map((authorization) => track(wsClient(server.base, { connectionParams: { Authorization: authorization }, lazy: false })).run<D>(query));
    await waitUntil(() => {
      const refused = recorders.find((r) => r.ended);
      if (refused !== undefined) throw new Error(`a subscription was refused: ${refused.describe()}`);
      return active() === before + authorizations.length;
    }, `${authorizations.length} subscriptions to run`);
    return recorders;
  }

  it('subscribers of the same operation get one execution per event: its nested read runs once, not once per subscriber', async () => {
    const author = await create('/users', { name: 'Author of many' });
    await create('/posts', { title: 'earlier', userId: author.id });
    const query = 'subscription { postCreated { id title user { name postsConnection(first: 5) { totalCount } } } }';
    const recorders = await subscribeAll<{ postCreated: { title: string; user: { name: string; postsConnection: { totalCount: number } } } }>(query, Array(40).fill(ADMIN));
    const other = await subscribeAll<{ postCreated: { id: string; user: { name: string } } }>('subscription { postCreated { id user { name } } }', [ADMIN]);

    statements.length = 0;
    await create('/posts', { title: 'shared', userId: author.id });
    for (const recorder of [...recorders, ...other]) await recorder.waitForResults(1);
    for (const recorder of recorders) expect(recorder.data).toMatchObject([{ postCreated: { title: 'shared', user: { name: 'Author of many', postsConnection: { totalCount: 2 } } } }]);
    // One read of the author for each of the two operations, one count for the first: not 41 and 40.
    // (The create's own check that the author exists reads users too, without the order by.)
    const userReads = statements.filter((sql) => /from "users" where .* order by/.test(sql));
    const counts = statements.filter((sql) => /count\(/i.test(sql) && /from "posts"/.test(sql));
    expect(userReads).toHaveLength(2);
    expect(counts).toHaveLength(1);
  });

  it('different principals on the same operation each get what their own credential may read (scopes and the owner rule, also in nested fields)', async () => {
    const alice = await create('/users', { name: 'Alice' });
    const bob = await create('/users', { name: 'Bob' });
    const product = await create('/products', { name: 'Lamp', sku: 'LAMP-1', price: 10 });
    const aliceKey = await keyFor(['orders:read', 'orders:write', 'users:read'], String(alice.id));
    const aliceTwin = await keyFor(['orders:read', 'orders:write', 'users:read'], String(alice.id));
    const bobKey = await keyFor(['orders:read', 'orders:write', 'users:read'], String(bob.id));
    const noOrders = await keyFor(['users:read'], String(alice.id));

    const orders = 'subscription { orderCreated { userId quantity } }';
    const [forAlice, forAliceTwin, forBob, forAdmin] = await subscribeAll<{ orderCreated: { userId: string; quantity: number } }>(orders, [
      aliceKey.authorization,
      aliceTwin.authorization,
      bobKey.authorization,
      ADMIN,
    ]);
    const refused = await track(wsClient(server.base, { connectionParams: { Authorization: noOrders.authorization } }))
      .run(orders)
      .waitForEnd();
    expect(codes(refusalOf(refused))).toEqual(['forbidden']);

    // A public resource whose nested field is owner-ruled: the same document, other rows.
    const nested = 'subscription { postCreated { title user { name orders { userId quantity } } } }';
    const [nestedAlice, nestedBob] = await subscribeAll<{ postCreated: { title: string; user: { name: string; orders: { userId: string; quantity: number }[] } } }>(nested, [
      aliceKey.authorization,
      bobKey.authorization,
    ]);

    const placed = [alice, bob, alice, bob].map((owner, i) => ({ userId: owner.id, productId: product.id, quantity: i + 1 }));
    for (const order of placed) await create('/orders', order);
    await must(forAdmin).waitForResults(4);
    await must(forAlice).waitForResults(2);
    await must(forAliceTwin).waitForResults(2);
    await must(forBob).waitForResults(2);
    const quantities = (recorder: Recorder<{ orderCreated: { userId: string; quantity: number } }> | undefined) => must(recorder).data.map((d) => [d.orderCreated.userId, d.orderCreated.quantity]);
    expect(quantities(forAdmin)).toEqual(placed.map((o) => [String(o.userId), o.quantity]));
    expect(quantities(forAlice)).toEqual([
      [String(alice.id), 1],
      [String(alice.id), 3],
    ]);
    expect(quantities(forAliceTwin)).toEqual(quantities(forAlice));
    expect(quantities(forBob)).toEqual([
      [String(bob.id), 2],
      [String(bob.id), 4],
    ]);

    // Alice's post: Alice sees her orders in it, Bob sees none of them.
    await create('/posts', { title: 'by Alice', userId: alice.id });
    await must(nestedAlice).waitForResults(1);
    await must(nestedBob).waitForResults(1);
    expect(must(nestedAlice).data[0]?.postCreated.user.orders.map((o) => o.quantity)).toEqual([1, 3]);
    expect(must(nestedBob).data[0]?.postCreated.user).toEqual({ name: 'Alice', orders: [] });
  });

  it('a key revoked mid-stream stops getting events; the subscriber beside it on the same shared execution goes on', async () => {
    const revoked = await keyFor(['users:read']);
    const kept = await keyFor(['users:read']);
    const closes: CloseLike[] = [];
    const revokedClient = track(wsClient(server.base, { connectionParams: { Authorization: revoked.authorization }, lazy: false, closes }));
    const before = active();
    const onRevoked = revokedClient.run<{ userCreated: { name: string } }>('subscription { userCreated { name } }');
    await waitUntil(() => active() === before + 1, 'the first subscription to run');
    const [onKept] = await subscribeAll<{ userCreated: { name: string } }>('subscription { userCreated { name } }', [kept.authorization]);

    await create('/users', { name: 'seen by both' });
    await onRevoked.waitForResults(1);
    await must(onKept).waitForResults(1);

    expect((await send(server.base, 'DELETE', `/v1/tokens/${String(revoked.id)}`, undefined, { authorization: ADMIN })).status).toBe(204);
    await waitUntil(() => onRevoked.ended, 'the revoked subscription to end');
    expect(closes.map((c) => c.code)).toContain(4403);
    await create('/users', { name: 'after the revocation' });
    await must(onKept).waitForResults(2);
    expect(must(onKept).data.map((d) => d.userCreated.name)).toEqual(['seen by both', 'after the revocation']);
    expect(onRevoked.results.map((r) => (r.data as { userCreated: { name: string } } | undefined)?.userCreated.name)).toEqual(['seen by both']);
  });

  it('a slow client delays none of 1,000 fast ones: on its own, or sharing their execution', { timeout: 120_000 }, async () => {
    const author = await create('/users', { name: 'Writer' });
    // 1,000 fast subscribers of small results, on 20 sockets of 50 operations each.
    const sockets = Array.from({ length: 20 }, () => track(wsClient(server.base, { connectionParams: { Authorization: ADMIN }, lazy: false })));
    const before = active();
    const fast = sockets.flatMap((client) => Array.from({ length: 50 }, () => client.run<{ postCreated: { id: string } }>('subscription { postCreated { id } }')));
    await waitUntil(() => active() === before + 1000, '1,000 fast subscriptions to run');
    // Slow clients that stop reading, each event ~120 kB to them: one with an operation of its
    // own, and one sharing the execution of 3 fast subscribers of the same operation.
    const heavy = `subscription { postCreated { id ${BODY_ALIASES} } }`;
    const alone = await rawSubscriber(server, `subscription { postCreated { title ${BODY_ALIASES} } }`);
    const sharing = await rawSubscriber(server, heavy);
    const heavyFast = await subscribeAll<{ postCreated: { id: string } }>(heavy, Array(3).fill(ADMIN));
    alone.pause();
    sharing.pause();
    const POSTS = 50;
    try {
      // 50 posts: ~6 MB to each slow client, more than its socket takes (about 4 MB here). Written
      // ten at a time, and no more: the slow clients must not stay paused long, or the server's
      // keepalive (a ping every 12 s, the socket ended after 12 s more without a pong) ends them, as
      // it would any client that stops reading that long (a loaded PostgreSQL pass took over 24 s
      // with 100).
      const ids: string[] = [];
      for (let i = 0; i < POSTS; i += 10) {
        const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => create('/posts', { title: `post ${i + j}`, userId: author.id, body: 'x'.repeat(4000) })));
        ids.push(...batch.map((post) => String(post.id)));
      }
      ids.sort((a, b) => Number(a) - Number(b));
      for (const recorder of [...fast, ...heavyFast]) await recorder.waitForResults(POSTS, 60_000);
      // Events come in event-id order, which concurrent writes need not give the posts' own ids
      // (PostgreSQL): every subscriber gets the same posts, in one same order.
      const order = must(fast[0]).data.map((d) => d.postCreated.id);
      expect([...order].sort((a, b) => Number(a) - Number(b))).toEqual(ids);
      for (const recorder of [...fast, ...heavyFast]) expect(recorder.data.map((d) => d.postCreated.id)).toEqual(order);
      // Meanwhile the slow ones got only what their sockets took.
      expect(alone.results().length).toBeLessThan(POSTS);
      expect(sharing.results().length).toBeLessThan(POSTS);
      // Once they read again they get every event, in order (they are within the lag limit).
      alone.resume();
      sharing.resume();
      await waitUntil(() => alone.results().length >= POSTS && sharing.results().length >= POSTS, 'the slow clients to catch up', 60_000).catch((error: unknown) => {
        const seen = (s: typeof alone) => `${s.results().length} results, last messages ${JSON.stringify(s.messages.slice(-2).map((m) => m.type))}`;
        throw new Error(`${String(error)}: alone ${seen(alone)}; sharing ${seen(sharing)}; server subscribers ${active()}`);
      });
      expect(sharing.results().map((r) => r.data?.postCreated.id)).toEqual(order);
      expect(alone.results()).toHaveLength(POSTS);
    } finally {
      alone.close();
      sharing.close();
    }
  });
});
