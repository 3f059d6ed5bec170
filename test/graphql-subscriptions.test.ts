import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, listenApp, send, tempDatabase, waitUntil, type ListeningApp, type Row } from './helpers/event-stream.js';
import {
  codes,
  isCloseLike,
  must,
  refusalOf,
  sseClient,
  subscriptionsEnded,
  wsClient,
  type CloseLike,
  type Recorder,
  type SubscriptionClient,
  type TransportName,
} from './helpers/subscription-clients.js';

/**
 * GraphQL subscriptions on a real listening server, with the real client libraries: graphql-ws
 * (graphql-transport-ws on the WebSocket upgrade of GET /graphql) and graphql-sse
 * (/graphql/stream, distinct connections mode unless said otherwise).
 *
 * The same behavioural suite runs on both transports: deliveries (every committed create, update
 * and delete, REST or GraphQL, cascades included, in order, once each), relation fields read at
 * each event, access (authentication, scopes, the owner rule), queries and mutations over the
 * transport, validation and limits. Then what is particular to each transport (the WebSocket
 * credential, 4403, operations per connection, revocation). Backpressure is in
 * graphql-subscriptions-paused-reader.test.ts and graphql-subscriptions-slow-consumers-ws.test.ts and -sse.test.ts;
 * graphql-sse's single connection mode and shutdown in graphql-subscriptions-lifecycle.test.ts.
 *
 * A subscription has started when the server's event dispatcher counts it
 * (`app.restgraph.events.subscriberCount`): only then are writes made, so "from now on" is exact.
 * Every test ends with that count back where it was (no subscription outlives its client).
 * "Exactly once" checks end with a sentinel write the subscriber also sees: events arrive in
 * commit order, so a duplicate or a stray event would come before the sentinel's.
 */

interface UserView {
  id: string;
  name: string;
}

describe('GraphQL subscriptions', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  /** Subscribers the server has before any test (a webhook feeder's, if it runs). */
  let baseline: number;
  const clients: SubscriptionClient[] = [];
  const keys = { usersRead: '', productsWrite: '', ordersAlice: '', ordersBob: '' };
  let alice: Row;
  let bob: Row;
  let product: Row;

  const active = (): number => server.app.restgraph.events.subscriberCount;

  /** A client that the test's end disposes. */
  function track(client: SubscriptionClient): SubscriptionClient {
    clients.push(client);
    return client;
  }

  /** Starts a subscription and waits until the server runs it; fails if it is refused. */
  async function subscribed<D = Record<string, unknown>>(client: SubscriptionClient, query: string, variables?: Record<string, unknown>): Promise<Recorder<D>> {
    const before = active();
    const recorder = client.run<D>(query, variables);
    await waitUntil(() => {
      if (recorder.ended) throw new Error(`the subscription ended at once: ${recorder.describe()}`);
      return active() === before + 1;
    }, `${query} to start on the server`);
    return recorder;
  }

  async function create(path: string, body: Row | Record<string, unknown>, authorization = ADMIN): Promise<Row> {
    const response = await send(server.base, 'POST', path, body, { authorization });
    expect(response.status, response.text).toBe(201);
    return response.json();
  }

  async function patch(path: string, body: Record<string, unknown>): Promise<Row> {
    const response = await send(server.base, 'PATCH', path, body);
    expect(response.status, response.text).toBe(200);
    return response.json();
  }

  async function remove(path: string): Promise<void> {
    const response = await send(server.base, 'DELETE', path);
    expect(response.status, response.text).toBe(204);
  }

  /** A GraphQL request over HTTP (POST /graphql) as admin that must succeed; returns its data. */
  async function graphqlOverHttp<D>(query: string, variables: Record<string, unknown> = {}): Promise<D> {
    const response = await send(server.base, 'POST', '/graphql', { query, variables });
    const body = JSON.parse(response.text) as { data?: D; errors?: unknown };
    expect({ status: response.status, errors: body.errors }, response.text).toEqual({ status: 200, errors: undefined });
    return must(body.data, 'data');
  }

  async function tokenFor(scopes: string[], subject?: string): Promise<string> {
    const token = await create('/v1/tokens', { name: `subscriptions ${scopes.join(' ')} ${subject ?? ''}`, scopes, ...(subject === undefined ? {} : { subject }) });
    return `Bearer ${String(token.key)}`;
  }

  beforeAll(async () => {
    db = await tempDatabase();
    server = await listenApp(db.url);
    baseline = active();
    alice = await create('/users', { name: 'Alice' });
    bob = await create('/users', { name: 'Bob' });
    product = await create('/products', { name: 'Lamp', sku: 'LAMP-1', price: 30 });
    keys.usersRead = await tokenFor(['users:read']);
    keys.productsWrite = await tokenFor(['products:write']);
    keys.ordersAlice = await tokenFor(['orders:read'], String(alice.id));
    keys.ordersBob = await tokenFor(['orders:read'], String(bob.id));
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.dispose()));
    await subscriptionsEnded(server, baseline);
  });

  afterAll(async () => {
    await server.close();
    await db.cleanup();
  });

  const TRANSPORTS: { name: TransportName; open: (authorization?: string) => SubscriptionClient }[] = [
    {
      name: 'graphql-ws',
      // The browser way: the credential in connection_init's payload.
      open: (authorization) => wsClient(server.base, authorization === undefined ? {} : { connectionParams: { Authorization: authorization } }),
    },
    {
      name: 'graphql-sse',
      open: (authorization) => sseClient(server.base, authorization === undefined ? {} : { headers: { authorization } }),
    },
  ];

  for (const transport of TRANSPORTS) {
    describe(`over ${transport.name}`, () => {
      const open = (authorization?: string): SubscriptionClient => track(transport.open(authorization));
      const tag = transport.name;

      it('userCreated: every committed create (REST, GraphQL over HTTP, GraphQL over this transport) arrives once, in commit order', async () => {
        const client = open(ADMIN);
        const sub = await subscribed<{ userCreated: UserView & { email: string | null } }>(client, 'subscription { userCreated { id name email } }');

        const first = await create('/users', { name: `${tag} rest` });
        const second = await graphqlOverHttp<{ createUser: { id: string } }>('mutation($n: String!, $e: String) { createUser(input: { name: $n, email: $e }) { id } }', { n: `${tag} graphql`, e: `${tag}@example.com` });
        const overTransport = await client.run<{ createUser: { id: string } }>(`mutation { createUser(input: { name: "${tag} transport" }) { id } }`).waitForEnd();
        const third = must(overTransport.data[0]).createUser.id;
        // Rejected writes and other kinds of change are not creates.
        expect((await send(server.base, 'POST', '/users', { name: '' })).status).toBe(422);
        expect((await send(server.base, 'POST', '/users', { name: 'dup', email: `${tag}@example.com` })).status).toBe(409);
        await patch(`/users/${first.id}`, { bio: 'changed' });
        const sentinel = await create('/users', { name: `${tag} sentinel` });

        await sub.waitForResults(4);
        expect(sub.data).toEqual([
          { userCreated: { id: String(first.id), name: `${tag} rest`, email: null } },
          { userCreated: { id: second.createUser.id, name: `${tag} graphql`, email: `${tag}@example.com` } },
          { userCreated: { id: third, name: `${tag} transport`, email: null } },
          { userCreated: { id: String(sentinel.id), name: `${tag} sentinel`, email: null } },
        ]);
        expect(sub.ended).toBe(false);
      });

      it('userUpdated(id) gets only that user’s updates; userUpdated without id gets every update; an update that changes nothing is no event', async () => {
        const client = open(ADMIN);
        const one = await create('/users', { name: `${tag} one` });
        const two = await create('/users', { name: `${tag} two` });
        const only = await subscribed<{ userUpdated: UserView & { bio: string | null } }>(client, 'subscription($id: ID) { userUpdated(id: $id) { id name bio } }', { id: String(one.id) });
        const all = await subscribed<{ userUpdated: UserView }>(client, 'subscription { userUpdated { id name } }');

        await patch(`/users/${two.id}`, { name: `${tag} two b` });
        await patch(`/users/${one.id}`, { bio: 'first bio' });
        await patch(`/users/${one.id}`, { bio: 'first bio' }); // no change
        await graphqlOverHttp(`mutation { updateUser(id: "${one.id}", input: { name: "${tag} one b" }) { id } }`);
        expect((await send(server.base, 'PATCH', `/users/${one.id}`, { name: '' })).status).toBe(422);
        await patch(`/users/${two.id}`, { name: `${tag} two c` });
        await patch(`/users/${one.id}`, { name: `${tag} one c`, bio: null });

        const [oneId, twoId] = [String(one.id), String(two.id)];
        await only.waitForResults(3);
        await all.waitForResults(5);
        expect(only.data).toEqual([
          { userUpdated: { id: oneId, name: `${tag} one`, bio: 'first bio' } },
          { userUpdated: { id: oneId, name: `${tag} one b`, bio: 'first bio' } },
          { userUpdated: { id: oneId, name: `${tag} one c`, bio: null } },
        ]);
        expect(all.data).toEqual([
          { userUpdated: { id: twoId, name: `${tag} two b` } },
          { userUpdated: { id: oneId, name: `${tag} one` } },
          { userUpdated: { id: oneId, name: `${tag} one b` } },
          { userUpdated: { id: twoId, name: `${tag} two c` } },
          { userUpdated: { id: oneId, name: `${tag} one c` } },
        ]);
      });

      it('userDeleted and postDeleted: cascaded deletes arrive too, each row as it was', async () => {
        const client = open(ADMIN);
        const writer = await create('/users', { name: `${tag} writer`, bio: 'writes' });
        const other = await create('/users', { name: `${tag} other` });
        const p1 = await create('/posts', { title: `${tag} p1`, userId: writer.id, tags: ['a'] });
        const p2 = await create('/posts', { title: `${tag} p2`, userId: writer.id });
        const p3 = await create('/posts', { title: `${tag} p3`, userId: alice.id });
        const users = await subscribed<{ userDeleted: UserView & { bio: string | null } }>(client, 'subscription { userDeleted { id name bio } }');
        const posts = await subscribed<{ postDeleted: { id: string; title: string; userId: string; tags: unknown } }>(client, 'subscription { postDeleted { id title userId tags } }');
        const onlyOther = await subscribed<{ userDeleted: UserView }>(client, `subscription { userDeleted(id: "${other.id}") { id name } }`);

        await remove(`/users/${writer.id}`);
        expect((await send(server.base, 'GET', `/posts/${p1.id}`)).status).toBe(404);
        await graphqlOverHttp(`mutation { deleteUser(id: "${other.id}") }`);
        await remove(`/posts/${p3.id}`); // sentinel for postDeleted

        await users.waitForResults(2);
        await posts.waitForResults(3);
        await onlyOther.waitForResults(1);
        expect(users.data).toEqual([
          { userDeleted: { id: String(writer.id), name: `${tag} writer`, bio: 'writes' } },
          { userDeleted: { id: String(other.id), name: `${tag} other`, bio: null } },
        ]);
        expect(posts.data).toEqual([
          { postDeleted: { id: String(p1.id), title: `${tag} p1`, userId: String(writer.id), tags: ['a'] } },
          { postDeleted: { id: String(p2.id), title: `${tag} p2`, userId: String(writer.id), tags: null } },
          { postDeleted: { id: String(p3.id), title: `${tag} p3`, userId: String(alice.id), tags: null } },
        ]);
        expect(onlyOther.data).toEqual([{ userDeleted: { id: String(other.id), name: `${tag} other` } }]);
      });

      it('relation fields of a payload are read at each event: a renamed author, a new post', async () => {
        const client = open(ADMIN);
        const author = await create('/users', { name: `${tag} Ada` });
        const posts = await subscribed<{ postCreated: { title: string; user: { name: string } | null } }>(client, 'subscription { postCreated { title user { name } } }');
        const updates = await subscribed<{ userUpdated: { name: string; posts: { title: string }[] } }>(
          client,
          `subscription { userUpdated(id: "${author.id}") { name posts(sort: [ID_ASC]) { title } } }`,
        );

        await create('/posts', { title: `${tag} first`, userId: author.id });
        await posts.waitForResults(1);
        await patch(`/users/${author.id}`, { name: `${tag} Ada Lovelace` });
        await updates.waitForResults(1);
        await create('/posts', { title: `${tag} second`, userId: author.id });
        await posts.waitForResults(2);
        await patch(`/users/${author.id}`, { name: `${tag} Countess` });
        await updates.waitForResults(2);

        expect(posts.data).toEqual([
          { postCreated: { title: `${tag} first`, user: { name: `${tag} Ada` } } },
          { postCreated: { title: `${tag} second`, user: { name: `${tag} Ada Lovelace` } } },
        ]);
        expect(updates.data).toEqual([
          { userUpdated: { name: `${tag} Ada Lovelace`, posts: [{ title: `${tag} first` }] } },
          { userUpdated: { name: `${tag} Countess`, posts: [{ title: `${tag} first` }, { title: `${tag} second` }] } },
        ]);
      });

      it('anonymous: userCreated is refused with authentication-required and completes; posts are public, so postCreated streams (its user field needs a token)', async () => {
        const anonymous = open();
        const refused = await anonymous.run('subscription { userCreated { id } }').waitForEnd();
        const errors = refusalOf(refused);
        expect(errors).toEqual([
          {
            message: expect.stringContaining('token') as string,
            locations: [{ line: 1, column: 16 }],
            path: ['userCreated'],
            extensions: { code: 'authentication-required', status: 401 },
          },
        ]);

        const posts = await subscribed<{ postCreated: { title: string; user: { name: string } | null } }>(anonymous, 'subscription { postCreated { title user { name } } }');
        await create('/posts', { title: `${tag} public`, userId: alice.id });
        const [result] = await posts.waitForResults(1);
        expect(result?.data).toEqual({ postCreated: { title: `${tag} public`, user: null } });
        expect(codes(result?.errors ?? [])).toEqual(['authentication-required']);
        expect(result?.errors?.[0]?.path).toEqual(['postCreated', 'user']);
        expect(posts.ended).toBe(false);
      });

      it('a key without a users scope: userCreated → forbidden; productCreated (public) streams', async () => {
        const client = open(keys.productsWrite);
        const refused = await client.run('subscription { userCreated { id } }').waitForEnd();
        const errors = refusalOf(refused);
        expect(codes(errors)).toEqual(['forbidden']);
        expect(errors[0]?.extensions).toEqual({ code: 'forbidden', status: 403 });
        expect(errors[0]?.path).toEqual(['userCreated']);

        const products = await subscribed<{ productCreated: { sku: string } }>(client, 'subscription { productCreated { sku } }');
        await create('/products', { name: 'Desk', sku: `DESK-${tag.toUpperCase()}`, price: 100 }, keys.productsWrite);
        await products.waitForResults(1);
        expect(products.data).toEqual([{ productCreated: { sku: `DESK-${tag.toUpperCase()}` } }]);
      });

      it('the owner rule: a key with subject A gets only A’s orders; admin gets all', async () => {
        type OrderView = { orderCreated: { id: string; userId: string; quantity: number } };
        const query = 'subscription { orderCreated { id userId quantity } }';
        const forAlice = await subscribed<OrderView>(open(keys.ordersAlice), query);
        const forBob = await subscribed<OrderView>(open(keys.ordersBob), query);
        const forAdmin = await subscribed<OrderView>(open(ADMIN), query);

        const owners = [alice, bob, alice, bob, alice, bob];
        const orders: Row[] = [];
        for (const [index, owner] of owners.entries()) orders.push(await create('/orders', { userId: owner.id, productId: product.id, quantity: index + 1 }));
        const view = (order: Row): OrderView => ({ orderCreated: { id: String(order.id), userId: String(order.userId), quantity: order.quantity as number } });

        await forAdmin.waitForResults(6);
        await forAlice.waitForResults(3);
        await forBob.waitForResults(3);
        expect(forAdmin.data).toEqual(orders.map(view));
        expect(forAlice.data).toEqual(orders.filter((o) => o.userId === alice.id).map(view));
        expect(forBob.data).toEqual(orders.filter((o) => o.userId === bob.id).map(view));
      });

      it('a query and a mutation over this transport run once and complete; their errors are GraphQL errors', async () => {
        const client = open(ADMIN);
        const query = await client.run<{ user: { name: string } | null }>('query($id: ID!) { user(id: $id) { name } }', { id: String(alice.id) }).waitForEnd();
        expect({ results: query.results, completed: query.completed }).toEqual({ results: [{ data: { user: { name: 'Alice' } } }], completed: true });

        const missing = await client.run<{ user: unknown }>('{ user(id: "999999") { name } }').waitForEnd();
        expect(missing.completed).toBe(true);
        expect(missing.results).toHaveLength(1);
        expect(missing.results[0]?.data).toEqual({ user: null });
        expect(codes(missing.results[0]?.errors ?? [])).toEqual(['not-found']);

        const mutation = await client.run<{ createProduct: { id: string; sku: string } }>(`mutation { createProduct(input: { name: "Chair", sku: "CHAIR-${tag.toUpperCase()}", price: 20 }) { id sku } }`).waitForEnd();
        expect(mutation.completed).toBe(true);
        const made = must(mutation.data[0]).createProduct;
        expect(made.sku).toBe(`CHAIR-${tag.toUpperCase()}`);
        expect((await send(server.base, 'GET', `/products/${made.id}`)).json()).toMatchObject({ sku: `CHAIR-${tag.toUpperCase()}`, price: 20 });

        const invalid = await client.run('mutation { createProduct(input: { name: "", sku: "x", price: -1 }) { id } }').waitForEnd();
        expect(invalid.completed).toBe(true);
        expect(invalid.results).toHaveLength(1);
        expect(invalid.results[0]?.data).toEqual({ createProduct: null });
        const [error] = invalid.results[0]?.errors ?? [];
        expect(error?.extensions?.code).toBe('validation-failed');
        expect((error?.extensions?.errors as { pointer: string }[]).map((e) => e.pointer).sort()).toEqual(['/name', '/price', '/sku']);
      });

      const REFUSED: { name: string; query: string; variables?: Record<string, unknown>; code: string; extensions?: Record<string, unknown> }[] = [
        { name: 'an unknown field', query: 'subscription { userCreated { nope } }', code: 'graphql-validation' },
        { name: 'two root fields in a subscription', query: 'subscription { userCreated { id } userDeleted { id } }', code: 'graphql-validation' },
        { name: 'a syntax error', query: 'subscription { userCreated { id ', code: 'graphql-syntax' },
        { name: 'a variable of the wrong type', query: 'subscription($id: ID) { userUpdated(id: $id) { id } }', variables: { id: { not: 'an id' } }, code: 'graphql-validation' },
        {
          name: 'a subscription 11 levels deep (maxDepth 10)',
          query: 'subscription { postCreated { user { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { user { id } } } } } } } } } } }',
          code: 'query-too-complex',
          extensions: { code: 'query-too-complex', status: 400, limit: 'maxDepth', actual: 11, max: 10 },
        },
        {
          name: 'a subscription over the cost budget (maxCost 50000)',
          query: 'subscription { userCreated { posts(first: 1000) { user { posts(first: 1000) { id } } } } }',
          code: 'query-too-complex',
        },
        { name: 'an id that cannot exist', query: 'subscription { userUpdated(id: "abc") { id } }', code: 'not-found' },
      ];
      for (const refused of REFUSED) {
        it(`refused, like over HTTP: ${refused.name} → ${refused.code}`, async () => {
          const recorder = await open(ADMIN).run(refused.query, refused.variables).waitForEnd();
          const errors = refusalOf(recorder);
          expect(codes(errors), recorder.describe()).toEqual([refused.code]);
          expect(errors[0]?.extensions?.status).toBe(refused.code === 'not-found' ? 404 : 400);
          if (refused.extensions !== undefined) expect(errors[0]?.extensions).toEqual(refused.extensions);
          if (refused.code === 'query-too-complex' && refused.extensions === undefined) {
            expect(errors[0]?.extensions).toMatchObject({ limit: 'maxCost', max: 50_000 });
            expect(errors[0]?.extensions?.actual).toBeGreaterThan(50_000);
          }
        });
      }

      it('10 levels deep is within maxDepth: the subscription starts and delivers', async () => {
        const sub = await subscribed<{ postCreated: Record<string, unknown> }>(
          open(ADMIN),
          'subscription { postCreated { user { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { user { posts(first: 1) { id } } } } } } } } } }',
        );
        const post = await create('/posts', { title: `${tag} deep`, userId: bob.id });
        await sub.waitForResults(1);
        const level = { posts: [{ id: expect.any(String) as string }] };
        expect(sub.data[0]).toEqual({ postCreated: { user: { posts: [{ user: { posts: [{ user: { posts: [{ user: level }] } }] } }] } } });
        expect(post.userId).toBe(bob.id);
      });
    });
  }

  describe('particular to graphql-ws', () => {

    it('the credential in the upgrade request’s Authorization header', async () => {
      const client = track(wsClient(server.base, { headers: { authorization: keys.usersRead } }));
      const sub = await subscribed<{ userCreated: UserView }>(client, 'subscription { userCreated { id name } }');
      const user = await create('/users', { name: 'via upgrade header' });
      await sub.waitForResults(1);
      expect(sub.data).toEqual([{ userCreated: { id: String(user.id), name: 'via upgrade header' } }]);
      const refused = await client.run('subscription { orderCreated { id } }').waitForEnd();
      expect(codes(refusalOf(refused))).toEqual(['forbidden']);
    });

    it('an invalid credential in connection_init closes the socket with 4403 (unknown key, wrong scheme, not a string)', async () => {
      const invalid: unknown[] = ['Bearer rg_not-a-key-at-all', 'Basic dXNlcjpwYXNz', keys.usersRead.slice(0, -2), { a: 1 }, 42, ['Bearer x'], true];
      for (const authorization of invalid) {
        const closes: CloseLike[] = [];
        const client = track(wsClient(server.base, { connectionParams: { Authorization: authorization }, closes }));
        const recorder = await client.run('subscription { postCreated { id } }').waitForEnd();
        expect({ errored: recorder.errored, results: recorder.results }).toEqual({ errored: true, results: [] });
        expect(isCloseLike(recorder.error) ? { code: recorder.error.code, reason: recorder.error.reason } : recorder.error).toEqual({ code: 4403, reason: 'Forbidden' });
        expect(closes).toEqual([{ code: 4403, reason: 'Forbidden' }]);
      }
    });

    it('an invalid credential in the upgrade header: the upgrade is refused (401 invalid-token) and the server closes the connection', async () => {
      const answer = await rawUpgrade(server.port, '/graphql', ['Sec-WebSocket-Protocol: graphql-transport-ws', 'Authorization: Bearer rg_not-a-key-at-all']);
      expect(answer.statusLine).toBe('HTTP/1.1 401 Unauthorized');
      expect(JSON.parse(answer.body)).toMatchObject({ errors: [{ extensions: { code: 'invalid-token', status: 401 } }] });
      // The socket left HTTP when the upgrade began: nothing will reuse or time it out, and an
      // open one holds app.close() up forever. The server must close it.
      expect(answer.closedByServer).toBe(true);
    });

    it('an upgrade on a path without WebSockets gets that path’s HTTP answer, then the server closes the connection', async () => {
      const health = await rawUpgrade(server.port, '/healthz', []);
      expect(health.statusLine).toBe('HTTP/1.1 200 OK');
      expect(health.closedByServer).toBe(true);
      const users = await rawUpgrade(server.port, '/users', []);
      expect(users.statusLine).toBe('HTTP/1.1 401 Unauthorized');
      expect(JSON.parse(users.body)).toMatchObject({ code: 'authentication-required', status: 401 });
      expect(users.closedByServer).toBe(true);
    });

    it('at most 100 operations per connection: all 100 run; the 101st is refused (query-too-complex, maxSubscriptionsPerConnection); completing one frees a place', async () => {
      const client = track(wsClient(server.base, { connectionParams: { Authorization: ADMIN }, lazy: false }));
      const query = 'subscription { userCreated { id } }';
      const running: Recorder[] = [];
      for (let i = 0; i < 100; i++) running.push(client.run(query));
      await waitUntil(() => {
        const ended = running.findIndex((r) => r.ended);
        if (ended >= 0) throw new Error(`operation ${ended + 1} of 100 was refused: ${must(running[ended]).describe()}`);
        return active() === baseline + 100;
      }, '100 subscriptions on one connection to run');

      const extra = await client.run(query).waitForEnd();
      const errors = refusalOf(extra);
      expect(codes(errors)).toEqual(['query-too-complex']);
      expect(errors[0]?.extensions).toEqual({ code: 'query-too-complex', status: 400, limit: 'maxSubscriptionsPerConnection', max: 100 });

      const user = await create('/users', { name: 'seen by 100' });
      for (const recorder of running) await recorder.waitForResults(1);
      expect(new Set(running.map((r) => JSON.stringify(r.data)))).toEqual(new Set([JSON.stringify([{ userCreated: { id: String(user.id) } }])]));

      must(running[0]).unsubscribe();
      await waitUntil(() => active() === baseline + 99, 'the completed subscription to end on the server');
      await subscribed(client, query);
      expect(active()).toBe(baseline + 100);
    });

    it('a key revoked while its socket is open stops working there too: new operations are refused', async () => {
      const token = await create('/v1/tokens', { name: 'revoked on a socket', scopes: ['users:read', 'users:write'] });
      const authorization = `Bearer ${String(token.key)}`;
      const closes: CloseLike[] = [];
      const client = track(wsClient(server.base, { connectionParams: { Authorization: authorization }, lazy: false, closes }));
      const before = await client.run<{ createUser: { id: string } }>('mutation { createUser(input: { name: "before revocation" }) { id } }').waitForEnd();
      expect(before.data).toHaveLength(1);

      await remove(`/v1/tokens/${String(token.id)}`);
      expect((await send(server.base, 'POST', '/users', { name: 'over REST after revocation' }, { authorization })).status).toBe(401);

      const after = await client.run<{ createUser: { id: string } }>('mutation { createUser(input: { name: "after revocation" }) { id } }').waitForEnd();
      // Either the operation is refused (invalid-token) or the socket is closed (4403).
      const outcome = isCloseLike(after.error) ? `close ${after.error.code}` : after.errored ? codes(refusalOf(after)).join() : codes(after.results[0]?.errors ?? []).join() || 'succeeded';
      expect(['invalid-token', 'close 4403']).toContain(outcome);
      const listed = (await send(server.base, 'GET', '/users?name=after%20revocation')).json<Row[]>();
      expect(listed).toEqual([]);
    });
  });

  describe('particular to graphql-sse', () => {
    it('an invalid credential is refused before any stream: 401 invalid-token', async () => {
      const response = await fetch(`${server.base}/graphql/stream`, {
        method: 'POST',
        headers: { authorization: 'Bearer rg_not-a-key-at-all', 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: 'subscription { postCreated { id } }' }),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'invalid-token', status: 401 } }] });
    });
  });
});

/**
 * Sends a WebSocket upgrade request on a raw socket (it closes only when the server closes it; an
 * HTTP client would close by itself) and reads the HTTP answer; then waits up to 5 s for the
 * server to close the connection.
 */
async function rawUpgrade(port: number, path: string, headers: readonly string[]): Promise<{ statusLine: string; body: string; closedByServer: boolean }> {
  const socket = connect(port, '127.0.0.1');
  const state = { text: '', ended: false };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (state.text += chunk));
  socket.once('end', () => (state.ended = true));
  try {
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.write(
      [
        `GET ${path} HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        ...headers,
        '',
        '',
      ].join('\r\n'),
    );
    await waitUntil(() => {
      const head = state.text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(state.text)?.[1];
      return head >= 0 && length !== undefined && state.text.length >= head + 4 + Number(length);
    }, `the HTTP answer to the upgrade on ${path}`);
    const closedByServer = await waitUntil(() => state.ended, 'the server to close the connection', 5000).then(
      () => true,
      () => false,
    );
    return { statusLine: state.text.slice(0, state.text.indexOf('\r\n')), body: state.text.slice(state.text.indexOf('\r\n\r\n') + 4), closedByServer };
  } finally {
    socket.resetAndDestroy();
  }
}
