import type { JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ADMIN, send, waitUntil } from './helpers/event-stream.js';
import { listeningServer } from './helpers/listening-server.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { sseClient, subscriptionsEnded, wsClient, type Recorder, type SubscriptionClient, type TransportName } from './helpers/subscription-clients.js';

/**
 * Shared subscription execution under access rules (issue 35, point 5): subscribers share one
 * execution only when every credential value the schema's rules read is the same. Each pair of
 * principals below differs in exactly one such value (the subject, a claim's value, a claim
 * present or absent, an array or object claim, a scope, the kind of credential); both subscribe
 * to the same document, and each must get exactly its own rows, over graphql-ws and graphql-sse.
 */

const SCHEMA = `
resources:
  items:
    access: { read: public, write: authenticated }
    rules:
      list: >-
        tag = 'all' or owner = @auth.sub or orgId = @auth.claims.org or orgId in @auth.claims.orgs
        or teamId = @auth.claims.team.id or (tag = 'extra' and 'items:extra' in @auth.scopes)
        or (tag = 'jwt' and @auth.kind = 'jwt') or (tag = 'key' and @auth.kind = 'key')
    fields:
      name: { type: string, required: true }
      owner: { type: string }
      orgId: { type: string }
      teamId: { type: string }
      tag: { type: string }
`;

/** A JWT that may read items, with `claims` (a scope among them replaces it). */
const jwt = (claims: JWTPayload): Promise<string> => bearerJwt({ scope: 'items:read', ...claims });

type Row = Record<string, unknown>;

interface Pair {
  what: string;
  first: () => Promise<string>;
  second: () => Promise<string>;
  /** The rows only the first may read, and those only the second may read (names are made unique per run). */
  firstRows: Row[];
  secondRows: Row[];
}

describe('subscription groups keep apart principals that differ in one value the rules read', () => {
  const clients: SubscriptionClient[] = [];
  const running = listeningServer({ schema: parseSchemaText(SCHEMA), jwt: { secret: RULES_JWT_SECRET } }, async () => {
    for (const client of clients.splice(0)) await client.dispose();
    await subscriptionsEnded(running.server);
  });
  const active = (): number => running.server.app.restgraph.events.subscriberCount;
  const groups = (): number => running.server.app.restgraph.graphql.subscriptions.size;

  async function apiKey(subject: string, claims?: Record<string, unknown>): Promise<string> {
    const made = await send(running.server.base, 'POST', '/v1/tokens', { name: 'realtime', scopes: ['items:read'], subject, ...(claims === undefined ? {} : { claims }) });
    expect(made.status, made.text).toBe(201);
    return `Bearer ${made.json<{ key: string }>().key}`;
  }

  const pairs: Pair[] = [
    { what: 'subject alice vs bob', first: () => jwt({ sub: 'alice' }), second: () => jwt({ sub: 'bob' }), firstRows: [{ owner: 'alice' }], secondRows: [{ owner: 'bob' }] },
    { what: 'subject present vs absent', first: () => jwt({ sub: 'u' }), second: () => jwt({}), firstRows: [{ owner: 'u' }], secondRows: [] },
    { what: 'claim org acme vs globex', first: () => jwt({ sub: 'u', org: 'acme' }), second: () => jwt({ sub: 'u', org: 'globex' }), firstRows: [{ orgId: 'acme' }], secondRows: [{ orgId: 'globex' }] },
    { what: 'claim org absent vs present', first: () => jwt({ sub: 'u' }), second: () => jwt({ sub: 'u', org: 'acme' }), firstRows: [], secondRows: [{ orgId: 'acme' }] },
    { what: 'claim org "null" (text) vs absent', first: () => jwt({ sub: 'u', org: 'null' }), second: () => jwt({ sub: 'u', org: null }), firstRows: [{ orgId: 'null' }], secondRows: [] },
    {
      what: 'array claim orgs [acme, globex] vs [acme]',
      first: () => jwt({ sub: 'u', orgs: ['acme', 'globex'] }),
      second: () => jwt({ sub: 'u', orgs: ['acme'] }),
      firstRows: [{ orgId: 'globex' }],
      secondRows: [],
    },
    { what: 'object claim team {id: t1} vs {id: t2}', first: () => jwt({ sub: 'u', team: { id: 't1' } }), second: () => jwt({ sub: 'u', team: { id: 't2' } }), firstRows: [{ teamId: 't1' }], secondRows: [{ teamId: 't2' }] },
    { what: 'scope items:extra present vs absent', first: () => jwt({ sub: 'u', scope: 'items:read items:extra' }), second: () => jwt({ sub: 'u' }), firstRows: [{ tag: 'extra' }], secondRows: [] },
    { what: 'API key claim org acme vs globex', first: () => apiKey('u', { org: 'acme' }), second: () => apiKey('u', { org: 'globex' }), firstRows: [{ orgId: 'acme' }], secondRows: [{ orgId: 'globex' }] },
    { what: 'kind jwt vs key', first: () => jwt({ sub: 'u' }), second: () => apiKey('u'), firstRows: [{ tag: 'jwt' }], secondRows: [{ tag: 'key' }] },
  ];

  function client(transport: TransportName, authorization: string): SubscriptionClient {
    const made = transport === 'graphql-ws' ? wsClient(running.server.base, { connectionParams: { Authorization: authorization }, lazy: false }) : sseClient(running.server.base, { headers: { authorization } });
    clients.push(made);
    return made;
  }

  let run = 0;
  for (const transport of ['graphql-ws', 'graphql-sse'] as const) {
    for (const pair of pairs) {
      it(`${transport}: ${pair.what}`, async () => {
        const label = `${transport} ${pair.what} ${++run}`;
        const query = 'subscription { itemCreated { name } }';
        type Created = { itemCreated: { name: string } };
        const recorders: Recorder<Created>[] = [];
        for (const authorization of [await pair.first(), await pair.second()]) {
          const before = active();
          const recorder = client(transport, authorization).run<Created>(query);
          recorders.push(recorder);
          await waitUntil(() => {
            if (recorder.ended) throw new Error(`the subscription ended: ${recorder.describe()}`);
            return active() === before + 1;
          }, 'the subscription to run');
        }
        const named = (rows: Row[], who: string): Row[] => rows.map((row, i) => ({ ...row, name: `${label} ${who} ${i}` }));
        const firstRows = named(pair.firstRows, 'first');
        const secondRows = named(pair.secondRows, 'second');
        for (const row of [...firstRows, ...secondRows, { name: `${label} end`, tag: 'all' }]) {
          const made = await send(running.server.base, 'POST', '/items', row, { authorization: ADMIN });
          expect(made.status, made.text).toBe(201);
        }
        const [first, second] = recorders as [Recorder<Created>, Recorder<Created>];
        for (const recorder of [first, second]) await recorder.waitFor((r) => r.data?.itemCreated.name === `${label} end`, 'the last item');
        const names = (recorder: Recorder<Created>): string[] => recorder.data.map((d) => d.itemCreated.name);
        expect(names(first)).toEqual([...firstRows.map((r) => r.name), `${label} end`]);
        expect(names(second)).toEqual([...secondRows.map((r) => r.name), `${label} end`]);
        // Two visibilities: two executions.
        expect(groups()).toBe(2);
      });
    }
  }

  it('principals that differ only in values no rule reads still share one execution', async () => {
    const query = 'subscription { itemCreated { name } }';
    type Created = { itemCreated: { name: string } };
    const recorders: Recorder<Created>[] = [];
    // Another name claim: no rule reads it.
    for (const authorization of [await jwt({ sub: 'u', org: 'acme', name: 'One' }), await jwt({ sub: 'u', org: 'acme', name: 'Two' })]) {
      const before = active();
      const recorder = client('graphql-ws', authorization).run<Created>(query);
      recorders.push(recorder);
      await waitUntil(() => active() === before + 1 || recorder.ended, 'the subscription to run');
    }
    expect(groups()).toBe(1);
    const made = await send(running.server.base, 'POST', '/items', { name: 'shared acme', orgId: 'acme' }, { authorization: ADMIN });
    expect(made.status, made.text).toBe(201);
    for (const recorder of recorders) {
      await recorder.waitForResults(1);
      expect(recorder.data).toEqual([{ itemCreated: { name: 'shared acme' } }]);
    }
  });
});
