import { SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ADMIN, send, waitUntil } from './helpers/event-stream.js';
import { listeningServer } from './helpers/listening-server.js';
import { codes, refusalOf, wsClient, type CloseLike, type Recorder, type SubscriptionClient } from './helpers/subscription-clients.js';

/**
 * Subscribers share one execution per event only when their credentials see the same rows
 * (issue 33, point 2): the grouping key must tell apart what the access rules tell apart. A
 * JWT whose `sub` is present but empty identifies no one and is refused, on REST and on the socket.
 */

const SECRET = 'an-hs256-secret-of-at-least-32-characters!';

const SCHEMA = `
versions: [v1]
resources:
  notes:
    access: { read: authenticated, write: [notes:write] }
    owner: author
    fields:
      text: { type: string, required: true }
      author: { type: string }
  secrets:
    access: { read: [secrets:read], write: [secrets:write] }
    fields:
      text: { type: string, required: true }
`;

/** An HS256 JWT of the test secret with exactly these claims (and iat, exp). */
async function jwt(claims: JWTPayload): Promise<string> {
  const token = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
  return `Bearer ${token}`;
}

describe('the grouping of GraphQL subscriptions keeps apart credentials that see different rows', () => {
  const clients: SubscriptionClient[] = [];
  const running = listeningServer({ schema: parseSchemaText(SCHEMA), jwt: { secret: SECRET } }, async () => {
    for (const client of clients.splice(0)) await client.dispose();
  });
  const active = (): number => running.server.app.restgraph.events.subscriberCount;

  /** Runs `query` on a socket of its own with this credential in connection_init. */
  function subscribe<D>(authorization: string, query: string, closes?: CloseLike[]): Recorder<D> {
    const client = wsClient(running.server.base, { connectionParams: { Authorization: authorization }, lazy: false, ...(closes === undefined ? {} : { closes }) });
    clients.push(client);
    return client.run<D>(query);
  }

  /** Waits until `recorder` runs on the server (the subscriber count went up) or has ended. */
  async function runningOrEnded(recorder: { readonly ended: boolean }, before: number): Promise<void> {
    await waitUntil(() => recorder.ended || active() > before, 'the subscription to run or be refused');
  }

  it('a JWT whose sub is empty is refused (REST 401, the socket 4403); a JWT without sub gets none of the "" owner\'s rows over either', async () => {
    const emptySubject = await jwt({ sub: '', scope: 'notes:read' });
    const noSubject = await jwt({ scope: 'notes:read' });
    const query = 'subscription { noteCreated { text author } }';
    type Note = { noteCreated: { text: string; author: string } };

    const closes: CloseLike[] = [];
    const onEmpty = subscribe<Note>(emptySubject, query, closes);
    await runningOrEnded(onEmpty, 0);
    const before = active();
    const onNone = subscribe<Note>(noSubject, query);
    await runningOrEnded(onNone, before);
    const onAdmin = subscribe<Note>(ADMIN, query);
    await runningOrEnded(onAdmin, active());

    const created = await send(running.server.base, 'POST', '/notes', { text: 'the empty subject\'s note', author: '' });
    expect(created.status, created.text).toBe(201);
    await onAdmin.waitForResults(1);
    // The "" subscriber (while it was accepted) got the note with the shared execution of its group.
    await waitUntil(() => onEmpty.ended || onEmpty.results.length > 0, 'the empty subject to get the note or be refused');

    // A credential without a subject owns nothing: REST shows it no note, and neither may its subscription.
    expect(onNone.results).toEqual([]);
    const listed = await send(running.server.base, 'GET', '/notes', undefined, { authorization: noSubject });
    expect(listed.status).toBe(200);
    expect(listed.json<unknown[]>()).toEqual([]);

    // An empty subject identifies no one: refused with a reason, on REST and on the socket.
    const refused = await send(running.server.base, 'GET', '/notes', undefined, { authorization: emptySubject });
    expect(refused.status).toBe(401);
    expect(refused.json<{ code: string; detail: string }>()).toMatchObject({ code: 'invalid-token', detail: "The token's sub claim is empty; a subject names someone, or the claim is left out." });
    // Nor does a sub that is not a string (it was read as no subject at all).
    const numeric = await send(running.server.base, 'GET', '/notes', undefined, { authorization: await jwt({ sub: 7 as unknown as string, scope: 'notes:read' }) });
    expect(numeric.status).toBe(401);
    expect(numeric.json<{ detail: string }>().detail).toContain('not a string');
    expect(onEmpty.results).toEqual([]);
    expect(onEmpty.ended).toBe(true);
    expect(closes.map((c) => c.code)).toEqual([4403]);
    expect(onNone.ended).toBe(false);
  });

  it('a scope with a space in it (a JWT array claim) is not the two scopes it spells: no share of their group', async () => {
    // The same subject, and scopes that print alike: "secrets:read users:read".
    const twoScopes = await jwt({ sub: 'same', scope: 'secrets:read users:read' });
    const oneScope = await jwt({ sub: 'same', scope: ['secrets:read users:read'] });
    const query = 'subscription { secretCreated { text } }';

    const onTwo = subscribe<{ secretCreated: { text: string } }>(twoScopes, query);
    await runningOrEnded(onTwo, 0);
    expect(onTwo.ended).toBe(false);
    const before = active();
    const onOne = subscribe<{ secretCreated: { text: string } }>(oneScope, query);
    await runningOrEnded(onOne, before);

    const created = await send(running.server.base, 'POST', '/secrets', { text: 'for secrets:read only' });
    expect(created.status, created.text).toBe(201);
    await onTwo.waitForResults(1);
    // REST refuses the one odd scope; so does the subscription, whoever subscribed before it.
    expect((await send(running.server.base, 'GET', '/secrets', undefined, { authorization: oneScope })).status).toBe(403);
    expect(onOne.results.filter((r) => r.data !== undefined && r.data !== null)).toEqual([]);
    expect(codes(refusalOf(onOne))).toEqual(['forbidden']);
  });
});
