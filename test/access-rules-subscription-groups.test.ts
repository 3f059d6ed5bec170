import { describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { send, waitUntil } from './helpers/event-stream.js';
import { listeningServer } from './helpers/listening-server.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { wsClient, type Recorder, type SubscriptionClient } from './helpers/subscription-clients.js';

/**
 * Shared subscription execution under access rules (issue 35 point 5): subscribers share one
 * execution per event only when every credential value the rules read is the same. Pairs that
 * differ in one such value only (the kind, the subject) each get their own rows, and none of the
 * other's. (Pairs that differ in a claim or its presence: access-rules-matrix-events.test.ts.)
 */

const SCHEMA = `
resources:
  notes:
    access: { read: authenticated, write: [notes:write] }
    rules:
      list: "public = true or @auth.kind = 'jwt' or plan = @auth.claims.plan or authorId = @auth.sub"
    fields:
      text: { type: string, required: true }
      public: { type: boolean, default: false }
      plan: { type: string }
      authorId: { type: string }
`;

type Note = { noteCreated: { text: string } };

describe('subscribers that differ in one value the rules read share no execution', () => {
  const clients: SubscriptionClient[] = [];
  const running = listeningServer({ schema: parseSchemaText(SCHEMA), jwt: { secret: RULES_JWT_SECRET } }, async () => {
    for (const client of clients.splice(0)) await client.dispose();
  });

  function subscribe(authorization: string): Recorder<Note> {
    const client = wsClient(running.server.base, { connectionParams: { Authorization: authorization }, lazy: false });
    clients.push(client);
    return client.run<Note>('subscription { noteCreated { text } }');
  }

  it('the kind (an API key and a JWT of the same subject and scopes) and the subject', async () => {
    const base = running.server.base;
    const key = await send(base, 'POST', '/v1/tokens', { name: 'key', scopes: ['notes:read'], subject: 'k' });
    expect(key.status, key.text).toBe(201);
    const followers: { name: string; recorder: Recorder<Note>; sees: (note: { public: boolean; plan?: string; authorId?: string }) => boolean }[] = [];
    const follow = async (name: string, authorization: string, sees: (note: { public: boolean; plan?: string; authorId?: string }) => boolean): Promise<void> => {
      const before = running.server.app.restgraph.events.subscriberCount;
      const recorder = subscribe(authorization);
      await waitUntil(() => running.server.app.restgraph.events.subscriberCount > before, `${name} to subscribe`);
      followers.push({ name, recorder, sees });
    };
    // Pairs that differ in one value only: the kind (key k and JWT k), the subject (keys k and p).
    // Keys have no claims (yet), so the plan claim is absent for them: the pro note reaches neither.
    const proKey = await send(base, 'POST', '/v1/tokens', { name: 'p', scopes: ['notes:read'], subject: 'p' });
    expect(proKey.status, proKey.text).toBe(201);
    await follow('API key k', `Bearer ${key.json<{ key: string }>().key}`, (n) => n.public || n.authorId === 'k');
    await follow('JWT k', await bearerJwt({ sub: 'k', scope: 'notes:read' }), () => true);
    await follow('API key p', `Bearer ${proKey.json<{ key: string }>().key}`, (n) => n.public || n.authorId === 'p');

    const notes = [
      { text: 'private of k', authorId: 'k', public: false },
      { text: 'private of p', authorId: 'p', public: false },
      { text: 'pro plan', plan: 'pro', public: false },
      { text: 'public', public: true },
    ];
    for (const note of notes) expect((await send(base, 'POST', '/notes', note)).status).toBe(201);
    for (const { name, recorder, sees } of followers) {
      await recorder.waitFor((r) => r.data?.noteCreated.text === 'public', `${name}: the public note`);
      expect(recorder.data.map((d) => d.noteCreated.text), name).toEqual(notes.filter(sees).map((n) => n.text));
    }
  }, 30_000);
});
