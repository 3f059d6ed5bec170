import { beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import type { Principal } from '../src/core/principal.js';
import type { StoredEvent } from '../src/store/event-store.js';
import { AUTHOR_DRAFT_POSTS } from './helpers/author-drafts-schema.js';
import { ADMIN, eventsUrl, send, SseReader, waitUntil, type StreamEvent } from './helpers/event-stream.js';
import { listeningServer } from './helpers/listening-server.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { codes, refusalOf, sseClient, wsClient, type Recorder, type SubscriptionClient, type TransportName } from './helpers/subscription-clients.js';

/**
 * Access rules in realtime delivery (issue 35, point 4): an event reaches a consumer of
 * `/v1/events`, graphql-ws or graphql-sse only when its credential may read the record (the row
 * as it is now for creates and updates, the row deleted for deletes); an update's `previous` only
 * when the row was readable before it too, and then only with the fields readable on both
 * versions; fields it may not read are left out of `data.object` (null in GraphQL). A filter on a
 * field it may not read on every row is refused (403 / forbidden).
 */

const SCHEMA = `
resources:${AUTHOR_DRAFT_POSTS}  memos:
    access: { read: authenticated, write: authenticated }
    rules:
      list: "orgId = @auth.claims.org"
    fields:
      body: { type: string }
      orgId: { type: string }
      secret: { type: string, read: [memos:secret] }
`;

type Row = Record<string, unknown>;
/** An event as the tests compare it: its type, the fields of its object, and of its previous when it has one (without timestamps). */
interface Seen {
  type: string;
  object: Row;
  previous?: Row;
}

const SHOWN = ['title', 'published', 'authorId', 'notes', 'body', 'orgId', 'secret'];
const shown = (row: Row): Row => Object.fromEntries(SHOWN.filter((name) => name in row).map((name) => [name, row[name]]));
const seen = (event: StreamEvent): Seen => {
  const { object, previous } = event.body.data;
  return previous === undefined ? { type: event.type, object: shown(object) } : { type: event.type, object: shown(object), previous: shown(previous) };
};

type Who = 'anonymous' | 'alice' | 'bob' | 'carol' | 'admin';
const WHO: readonly Who[] = ['anonymous', 'alice', 'bob', 'carol', 'admin'];

describe('access rules in realtime delivery', () => {
  const clients: SubscriptionClient[] = [];
  const readers: SseReader[] = [];
  const running = listeningServer({ schema: parseSchemaText(SCHEMA), jwt: { secret: RULES_JWT_SECRET } }, async () => {
    for (const reader of readers.splice(0)) reader.close();
    for (const client of clients.splice(0)) await client.dispose();
  });
  const credentials = new Map<Who, string>();
  const active = (): number => running.server.app.restgraph.events.subscriberCount;

  beforeAll(async () => {
    credentials.set('anonymous', '');
    credentials.set('alice', await bearerJwt({ sub: 'alice', org: 'acme' }));
    credentials.set('bob', await bearerJwt({ sub: 'bob', org: 'globex' }));
    credentials.set('carol', await bearerJwt({ sub: 'carol', org: 'acme', scope: 'memos:secret' }));
    credentials.set('admin', ADMIN);
  });
  const credential = (who: Who): string => credentials.get(who) ?? '';

  function client(transport: TransportName, who: Who): SubscriptionClient {
    const authorization = credential(who);
    const made =
      transport === 'graphql-ws'
        ? wsClient(running.server.base, { ...(authorization === '' ? {} : { connectionParams: { Authorization: authorization } }), lazy: false })
        : sseClient(running.server.base, { headers: authorization === '' ? {} : { authorization } });
    clients.push(made);
    return made;
  }

  async function write(who: Who, method: string, path: string, body?: Row): Promise<Row> {
    const response = await send(running.server.base, method, path, body, { authorization: credential(who) });
    expect(response.status, `${who} ${method} ${path}: ${response.text}`).toBeLessThan(300);
    return response.status === 204 ? {} : response.json();
  }

  // The rows of the scenario, state by state (see the writes below).
  const s1 = { title: 'p1', published: false, authorId: 'alice', notes: 'a1' };
  const s2 = { ...s1, published: true };
  const s3 = { ...s2, title: 'p1b', notes: 'a2' };
  const s4 = { ...s3, authorId: 'bob', notes: 'b1' };
  const s5 = { ...s4, published: false };
  const p2 = { title: 'p2', published: true, authorId: 'bob', notes: 'b2' };
  const end = { title: 'end', published: true, authorId: null, notes: null };
  const m1 = { body: 'm1', orgId: 'acme', secret: 's1' };
  const m2 = { ...m1, orgId: 'globex' };
  const m3 = { ...m2, body: 'm1b' };
  const without = (row: Row, ...names: string[]): Row => Object.fromEntries(Object.entries(row).filter(([name]) => !names.includes(name)));
  const ev = (type: string, object: Row, previous?: Row): Seen => (previous === undefined ? { type, object } : { type, object, previous });

  /** Who receives what, by the rules: the expected events of each principal, in order. */
  const markers = [ev('post.created', without(end, 'notes')), ev('post.updated', without({ ...end, title: 'end2' }, 'notes'), { title: 'end' }), ev('post.deleted', without({ ...end, title: 'end2' }, 'notes'))];
  const publicPosts = [
    // W2: was alice's draft: no previous; notes are alice's.
    ev('post.updated', without(s2, 'notes')),
    ev('post.updated', without(s3, 'notes'), { title: 'p1' }),
    ev('post.updated', without(s4, 'notes'), { authorId: 'alice' }),
    // W5, W6: bob's draft now.
    ev('post.created', without(p2, 'notes')),
    ev('post.deleted', without(p2, 'notes')),
  ];
  const expected: Record<Who, Seen[]> = {
    anonymous: [...publicPosts, ...markers],
    alice: [
      ev('post.created', s1),
      ev('post.updated', s2, { published: false }),
      ev('post.updated', s3, { title: 'p1', notes: 'a1' }),
      // Now bob's: his notes are not hers, and neither is the earlier note's having changed.
      ev('post.updated', without(s4, 'notes'), { authorId: 'alice' }),
      ev('post.created', without(p2, 'notes')),
      ev('post.deleted', without(p2, 'notes')),
      ev('memo.created', without(m1, 'secret')),
      ...markers,
    ],
    bob: [
      ev('post.updated', without(s2, 'notes')),
      ev('post.updated', without(s3, 'notes'), { title: 'p1' }),
      // His notes now; alice's earlier notes were never his to read.
      ev('post.updated', s4, { authorId: 'alice' }),
      ev('post.updated', s5, { published: true }),
      ev('post.deleted', s5),
      ev('post.created', p2),
      ev('post.deleted', p2),
      // Moved into his organisation: no previous (he could not read the memo before).
      ev('memo.updated', without(m2, 'secret')),
      ev('memo.updated', without(m3, 'secret'), { body: 'm1' }),
      ...markers,
    ],
    carol: [...publicPosts, ev('memo.created', m1), ...markers],
    admin: [
      ev('post.created', s1),
      ev('post.updated', s2, { published: false }),
      ev('post.updated', s3, { title: 'p1', notes: 'a1' }),
      ev('post.updated', s4, { authorId: 'alice', notes: 'a2' }),
      ev('post.updated', s5, { published: true }),
      ev('post.deleted', s5),
      ev('post.created', p2),
      ev('post.deleted', p2),
      ev('memo.created', m1),
      ev('memo.updated', m2, { orgId: 'acme' }),
      ev('memo.updated', m3, { body: 'm1' }),
      ev('post.created', end),
      ev('post.updated', { ...end, title: 'end2' }, { title: 'end' }),
      ev('post.deleted', { ...end, title: 'end2' }),
    ],
  };

  /** The writes: creates, updates and deletes by several principals, then the markers every reader of posts sees. */
  async function scenario(): Promise<void> {
    const p1 = await write('alice', 'POST', '/posts', s1);
    await write('alice', 'PATCH', `/posts/${String(p1.id)}`, { published: true });
    await write('alice', 'PATCH', `/posts/${String(p1.id)}`, { title: 'p1b', notes: 'a2' });
    await write('admin', 'PATCH', `/posts/${String(p1.id)}`, { authorId: 'bob', notes: 'b1' });
    await write('bob', 'PATCH', `/posts/${String(p1.id)}`, { published: false });
    await write('bob', 'DELETE', `/posts/${String(p1.id)}`);
    const second = await write('bob', 'POST', '/posts', p2);
    await write('admin', 'DELETE', `/posts/${String(second.id)}`);
    const memo = await write('admin', 'POST', '/memos', m1);
    await write('admin', 'PATCH', `/memos/${String(memo.id)}`, { orgId: 'globex' });
    await write('admin', 'PATCH', `/memos/${String(memo.id)}`, { body: 'm1b' });
    const last = await write('admin', 'POST', '/posts', { title: 'end', published: true });
    await write('admin', 'PATCH', `/posts/${String(last.id)}`, { title: 'end2' });
    await write('admin', 'DELETE', `/posts/${String(last.id)}`);
  }

  const POST_FIELDS = 'title published authorId notes';
  const KINDS = ['created', 'updated', 'deleted'] as const;
  type PostData = Record<string, Row | null>;

  it('each principal receives exactly the events and fields the rules let it read: /v1/events (live and replayed), graphql-ws, graphql-sse', async () => {
    const streams = new Map<Who, SseReader>();
    const subscriptions = new Map<string, Recorder<PostData>>();
    for (const who of WHO) {
      const reader = await SseReader.open(eventsUrl(running.server.base), { authorization: credential(who) });
      readers.push(reader);
      expect(reader.status).toBe(200);
      streams.set(who, reader);
      for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
        for (const kind of KINDS) {
          subscriptions.set(`${who} ${transport} ${kind}`, client(transport, who).run<PostData>(`subscription { post${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)} { ${POST_FIELDS} } }`));
        }
      }
    }
    await waitUntil(() => {
      const ended = [...subscriptions.values()].find((r) => r.ended);
      if (ended !== undefined) throw new Error(`a subscription ended: ${ended.describe()}`);
      return active() === WHO.length * (1 + 2 * KINDS.length);
    }, 'every stream and subscription to run');

    await scenario();

    const isLast = (event: StreamEvent): boolean => event.type === 'post.deleted' && event.body.data.object.title === 'end2';
    for (const who of WHO) {
      const reader = streams.get(who) as SseReader;
      await reader.until(isLast, `the last event on ${who}'s stream`);
      expect(reader.events.map(seen), `${who} on /v1/events`).toEqual(expected[who]);
    }

    for (const who of WHO) {
      for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
        for (const kind of KINDS) {
          const field = `post${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)}`;
          const recorder = subscriptions.get(`${who} ${transport} ${kind}`) as Recorder<PostData>;
          const want = expected[who].filter((e) => e.type === `post.${kind}`).map((e) => ({ [field]: { title: e.object.title, published: e.object.published, authorId: e.object.authorId, notes: e.object.notes ?? null } }));
          await recorder.waitFor((r) => r.data?.[field]?.title === 'end2' || (kind === 'created' && r.data?.[field]?.title === 'end'), `the last ${kind} on ${who}'s ${transport}`);
          expect(recorder.results.map((r) => r.data), `${who} on ${transport} ${field}`).toEqual(want);
          // A hidden field is null with a forbidden error at its path, as in queries.
          const errors = expected[who].filter((e) => e.type === `post.${kind}`).map((e) => ('notes' in e.object ? [] : [{ code: 'forbidden', path: [field, 'notes'] }]));
          expect(recorder.results.map((r) => (r.errors ?? []).map((e) => ({ code: e.extensions?.code, path: e.path }))), `${who} on ${transport} ${field}: errors`).toEqual(errors);
        }
      }
    }

    // Replayed from the outbox (Last-Event-ID): the same view, through the catching-up path.
    const first = (streams.get('admin') as SseReader).events[0]?.id ?? 1;
    for (const who of ['alice', 'bob', 'anonymous'] as const) {
      const replay = await SseReader.open(eventsUrl(running.server.base), { authorization: credential(who), 'last-event-id': String(first - 1) });
      readers.push(replay);
      await replay.until(isLast, `the last event replayed to ${who}`);
      expect(replay.events.map(seen), `${who} replaying /v1/events`).toEqual(expected[who]);
    }
  });

  it('a filter on a field the principal may not read on every row is refused (403 on /v1/events, forbidden on subscriptions)', async () => {
    const status = async (who: Who, query: Record<string, string>): Promise<number> => {
      const reader = await SseReader.open(eventsUrl(running.server.base, query), { authorization: credential(who) });
      readers.push(reader);
      if (reader.status !== 200) await reader.ended;
      return reader.status;
    };
    const onNotes = { types: 'post.created,post.updated', filter: "notes = 'a1'" };
    // Even alice, who reads notes on her own posts: not on every row.
    for (const who of ['anonymous', 'alice', 'bob'] as const) expect(await status(who, onNotes), who).toBe(403);
    expect(await status('admin', onNotes)).toBe(200);
    expect(await status('bob', { types: 'post.created', filter: "title = 'x'" })).toBe(200);
    const onSecret = { types: 'memo.created', filter: "secret ~ 's'" };
    expect(await status('alice', onSecret)).toBe(403);
    expect(await status('carol', onSecret)).toBe(200);
    const refused = await send(running.server.base, 'GET', `/v1/events?${new URLSearchParams(onNotes).toString()}`, undefined, { authorization: credential('bob'), accept: 'text/event-stream' });
    expect(refused.json<{ code: string; detail: string }>()).toMatchObject({ code: 'forbidden' });
    expect(refused.json<{ detail: string }>().detail).toContain('posts.notes');

    for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
      for (const [who, query] of [
        ['alice', 'subscription { postCreated(where: { notes: { eq: "a1" } }) { title } }'],
        ['bob', 'subscription { postUpdated(where: { _or: [{ title: { eq: "x" } }, { _not: { notes: { startsWith: "a" } } }] }) { title } }'],
        ['alice', 'subscription { memoCreated(where: { secret: { eq: "s1" } }) { body } }'],
      ] as const) {
        const errors = refusalOf(await client(transport, who).run(query).waitForEnd());
        expect(codes(errors), `${transport} ${who} ${query}`).toEqual(['forbidden']);
      }
      // The same filters are fine where the field is readable on every row.
      const before = active();
      const allowed = [client(transport, 'admin').run('subscription { postCreated(where: { notes: { eq: "a1" } }) { title } }'), client(transport, 'carol').run('subscription { memoCreated(where: { secret: { eq: "s1" } }) { body } }')];
      await waitUntil(() => {
        const ended = allowed.find((r) => r.ended);
        if (ended !== undefined) throw new Error(`a subscription ended: ${ended.describe()}`);
        return active() === before + 2;
      }, 'the allowed subscriptions to run');
    }
  });

  it('subscribers with the same visibility are handed the one view of an event (encoded once), others their own', () => {
    const events = running.server.app.restgraph.events;
    const event: StoredEvent = {
      id: 1_000_000,
      type: 'post.created',
      resource: 'posts',
      recordId: 1,
      data: { object: { id: 1, title: 't', published: true, authorId: 'alice', notes: 'n' } },
      occurredAt: new Date().toISOString(),
    };
    const jwtOf = (subject: string, id: string): Principal => ({ kind: 'jwt', subject, scopes: new Set(), claims: { sub: subject }, credentialId: id });
    const anonymous = (): Principal => ({ kind: 'anonymous', scopes: new Set(), credentialId: 'anonymous' });
    const first = events.seenBy(anonymous(), event);
    expect(first?.data.object).toEqual({ id: 1, title: 't', published: true, authorId: 'alice' });
    expect(events.seenBy(anonymous(), event)).toBe(first);
    // Bob sees what anonymous sees, but his visibility key differs (the rules read the subject).
    const bob = events.seenBy(jwtOf('bob', 'b1'), event);
    expect(bob).toEqual(first);
    expect(bob).not.toBe(first);
    expect(events.seenBy(jwtOf('bob', 'b2'), event)).toBe(bob);
    // Alice hides nothing: the event itself.
    expect(events.seenBy(jwtOf('alice', 'a'), event)).toBe(event);
  });
});
