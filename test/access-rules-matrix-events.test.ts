import { describe, expect, it } from 'vitest';
import { ADMIN, eventsUrl, send, SseReader, waitUntil } from './helpers/event-stream.js';
import { listeningServer } from './helpers/listening-server.js';
import { PRINCIPALS, USERS, seesPost, type Post, type User, type Who } from './helpers/multi-tenant-model.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { wsClient, type Recorder, type SubscriptionClient } from './helpers/subscription-clients.js';

/**
 * The realtime half of issue 35's matrix (test/access-rules-matrix.test.ts has the rest): every
 * principal of the model follows posts on /v1/events and with GraphQL subscriptions while posts
 * of the three tenants are created, published, unpublished and deleted; each receives exactly the
 * events the model lets it read (the new row for creates and updates, the old one for deletes),
 * `previous` only when it could read that version too. Principals that differ in one claim only
 * (alice's subject with another org) receive nothing of each other's rows.
 */

/** A row as GraphQL answers it: ids are strings. */
type GraphqlRow = { id: string };

type Write = { type: 'post.created' | 'post.updated' | 'post.deleted'; before?: Post; after?: Post };

/** The principals of the model, and one that differs from the author only in its org claim. */
const FOLLOWERS: Who[] = [
  ...PRINCIPALS,
  { name: "alice's subject with globex's org claim", sub: '1', org: 'globex', scopes: [], admin: false, anonymous: false, credential: { kind: 'jwt', claims: { sub: '1', org: 'globex' } } },
  { name: "alice's subject without an org claim", sub: '1', scopes: [], admin: false, anonymous: false, credential: { kind: 'jwt', claims: { sub: '1' } } },
];

/** The events `who` may receive of `writes`, in order: the type, the id, and whether `previous` comes with it. */
function expectedEvents(who: Who, writes: readonly Write[]): { type: string; id: number; previous: boolean }[] {
  return writes
    .filter((w) => seesPost(who, (w.type === 'post.deleted' ? w.before : w.after) as Post))
    .map((w) => ({ type: w.type, id: (w.after ?? w.before)?.id ?? 0, previous: w.type === 'post.updated' && seesPost(who, w.before as Post) }));
}

describe('the multi-tenant matrix: subscriptions and /v1/events', () => {
  const clients: SubscriptionClient[] = [];
  const readers: SseReader[] = [];
  const running = listeningServer({ schema: 'examples/multi-tenant.yaml', jwt: { secret: RULES_JWT_SECRET } }, async () => {
    for (const reader of readers.splice(0)) reader.close();
    for (const client of clients.splice(0)) await client.dispose();
  });

  type Follower = { who: Who; reader: SseReader; created?: Recorder<{ postCreated: GraphqlRow }>; updated?: Recorder<{ postUpdated: GraphqlRow }>; deleted?: Recorder<{ postDeleted: GraphqlRow }> };

  /**
   * Every principal follows posts (on /v1/events, and with subscriptions when asked) while posts
   * of the three tenants are created, published, unpublished and deleted; resolves once each
   * follower has had every event of the scenario it will get.
   */
  async function scenario(subscriptions: boolean): Promise<{ followers: Follower[]; writes: Write[] }> {
    const base = running.server.base;
    let users = (await send(base, 'GET', '/users?sort=id')).json<User[]>();
    if (users.length === 0) {
      for (const user of USERS) expect((await send(base, 'POST', '/users', user)).status).toBe(201);
      users = (await send(base, 'GET', '/users?sort=id')).json<User[]>();
    }
    const followers: Follower[] = [];
    for (const who of FOLLOWERS) {
      // API keys with claims cannot be made yet (pending API key claims); the JWTs stand for them.
      if (who.credential.kind === 'key') continue;
      const authorization = who.credential.kind === 'none' ? '' : who.credential.kind === 'admin' ? ADMIN : await bearerJwt(who.credential.claims);
      const reader = await SseReader.open(eventsUrl(base, { types: 'post.created,post.updated,post.deleted' }), { authorization });
      readers.push(reader);
      expect(reader.status, who.name).toBe(200);
      if (!subscriptions) {
        followers.push({ who, reader });
        continue;
      }
      const client = wsClient(base, { connectionParams: authorization === '' ? {} : { Authorization: authorization }, lazy: false });
      clients.push(client);
      followers.push({
        who,
        reader,
        created: client.run('subscription { postCreated { id title orgId } }'),
        updated: client.run('subscription { postUpdated { id title orgId published } }'),
        deleted: client.run('subscription { postDeleted { id } }'),
      });
    }
    await waitUntil(() => running.server.app.restgraph.events.subscriberCount >= followers.length * (subscriptions ? 4 : 1), 'every stream and subscription to run');

    const writes: Write[] = [];
    const create = async (post: Omit<Post, 'id'>): Promise<Post> => {
      const created = await send(base, 'POST', '/posts', post);
      expect(created.status, created.text).toBe(201);
      writes.push({ type: 'post.created', after: created.json<Post>() });
      return created.json<Post>();
    };
    const update = async (post: Post, change: Partial<Post>): Promise<Post> => {
      const updated = await send(base, 'PATCH', `/posts/${post.id}`, change);
      expect(updated.status, updated.text).toBe(200);
      writes.push({ type: 'post.updated', before: post, after: updated.json<Post>() });
      return updated.json<Post>();
    };
    const remove = async (post: Post): Promise<void> => {
      expect((await send(base, 'DELETE', `/posts/${post.id}`)).status).toBe(204);
      writes.push({ type: 'post.deleted', before: post });
    };
    const [alice, amy, gus, gina, ian, iris] = users as [User, User, User, User, User, User];
    const post = (author: User, title: string, published: boolean): Omit<Post, 'id'> => ({ title, body: 'b', published, views: 0, authorId: author.id, orgId: author.orgId });
    const p1 = await create(post(alice, 'alice published', true));
    const p2 = await create(post(alice, 'alice draft', false));
    const p3 = await create(post(gus, 'gus published', true));
    await create(post(ian, 'ian draft', false));
    const p2Published = await update(p2, { published: true });
    await update(p1, { published: false });
    const p3Renamed = await update(p3, { title: 'gus renamed' });
    await remove(p3Renamed);
    await remove(p2Published);
    // One published post per tenant last: a follower that has its tenant's has had every event before it.
    const markers = [await create(post(amy, 'acme marker', true)), await create(post(gina, 'globex marker', true)), await create(post(iris, 'initech marker', true))];
    const last = markers[2] as Post;
    await followers.find((f) => f.who.admin)?.reader.waitFor((r) => r.events.some((e) => e.body.data.object.id === last.id), 'the last marker on the admin stream');
    for (const { who, reader, created } of followers) {
      const marker = markers.find((m) => seesPost(who, m));
      if (marker === undefined) continue;
      await reader.waitFor((r) => r.events.some((e) => e.body.data.object.id === marker.id), `${who.name}: its tenant's marker`);
      await created?.waitFor((r) => r.data?.postCreated.id === String(marker.id), `${who.name}: its tenant's marker`);
    }
    return { followers, writes };
  }

  it('/v1/events: each principal receives exactly the events of the rows it may read (the new row for creates and updates, the old one for deletes)', async () => {
    const { followers, writes } = await scenario(false);
    expect(followers.length).toBe(FOLLOWERS.length - 1);
    expect(followers.filter((f) => expectedEvents(f.who, writes).length === 0).map((f) => f.who.name)).toEqual(['anonymous', "alice's subject without an org claim"]);
    for (const { who, reader } of followers) {
      expect(reader.events.map((e) => ({ type: e.type, id: e.body.data.object.id })), `/v1/events of ${who.name}`).toEqual(expectedEvents(who, writes).map(({ type, id }) => ({ type, id })));
    }
  }, 60_000);

  // Rules on events' `previous` (issue 35 point 4) are being built on another branch.
  it('/v1/events: an update carries `previous` only when the principal could read that version too', async () => {
    const { followers, writes } = await scenario(false);
    for (const { who, reader } of followers) {
      expect(reader.events.map((e) => ({ type: e.type, id: e.body.data.object.id, previous: e.body.data.previous !== undefined })), `/v1/events of ${who.name}`).toEqual(expectedEvents(who, writes));
    }
  }, 60_000);

  // Principals that differ in one value the rules read only (alice and amy: the subject; alice with
  // another org claim, or none) share no execution (issue 35 point 5).
  it('GraphQL subscriptions: each principal receives exactly the rows it may read, none of another\'s group', async () => {
    const { followers, writes } = await scenario(true);
    for (const { who, created, updated, deleted } of followers) {
      const expected = expectedEvents(who, writes);
      const ofType = (type: string): number[] => expected.filter((e) => e.type === type).map((e) => e.id);
      await updated?.waitForResults(ofType('post.updated').length);
      await deleted?.waitForResults(ofType('post.deleted').length);
      expect(created?.data.map((d) => Number(d.postCreated.id)), `postCreated of ${who.name}`).toEqual(ofType('post.created'));
      expect(updated?.data.map((d) => Number(d.postUpdated.id)), `postUpdated of ${who.name}`).toEqual(ofType('post.updated'));
      expect(deleted?.data.map((d) => Number(d.postDeleted.id)), `postDeleted of ${who.name}`).toEqual(ofType('post.deleted'));
    }
  }, 60_000);
  // Field access on events (issue 35 points 2 and 4) is being built on other branches.
  it("/v1/events: a user's email is left out of `data` (object and previous) for whoever may not read it", async () => {
    const base = running.server.base;
    let users = (await send(base, 'GET', '/users?sort=id')).json<User[]>();
    if (users.length === 0) {
      for (const user of USERS) expect((await send(base, 'POST', '/users', user)).status).toBe(201);
      users = (await send(base, 'GET', '/users?sort=id')).json<User[]>();
    }
    const amy = users[1] as User;
    const watchers: { who: Who; reader: SseReader }[] = [];
    for (const who of FOLLOWERS.filter((f) => !f.anonymous && f.credential.kind !== 'key' && f.org === 'acme')) {
      const authorization = who.credential.kind === 'jwt' ? await bearerJwt(who.credential.claims) : ADMIN;
      const reader = await SseReader.open(eventsUrl(base, { types: 'user.updated' }), { authorization });
      readers.push(reader);
      watchers.push({ who, reader });
    }
    await waitUntil(() => running.server.app.restgraph.events.subscriberCount >= watchers.length, 'every stream to run');
    expect((await send(base, 'PATCH', `/users/${amy.id}`, { email: 'amy@new.example', name: 'amy b' })).status).toBe(200);
    for (const { who, reader } of watchers) {
      await reader.waitFor((r) => r.events.length > 0, `${who.name}: amy's update`);
      const data = reader.events[0]?.body.data;
      const mayRead = who.admin || who.sub === String(amy.id) || who.scopes.includes('users:admin');
      expect(Object.hasOwn(data?.object ?? {}, 'email'), `${who.name}: object.email`).toBe(mayRead);
      expect(Object.hasOwn(data?.previous ?? {}, 'email'), `${who.name}: previous.email`).toBe(mayRead);
      expect(data?.object.name).toBe('amy b');
    }
  }, 60_000);
});
