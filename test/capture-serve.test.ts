import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, finish, itWithFolder, startCli, type CliFolder } from './helpers/cli-process.js';
import { createCaptureSample, type CaptureSample } from './helpers/capture-sample.js';
import { ADMIN, eventsUrl, listenApp, send, SseReader, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { wsClient, type Recorder, type SubscriptionClient } from './helpers/subscription-clients.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * Events for writes made by other programs, end to end (docs/existing-database.md#events-for-writes-made-by-other-programs):
 * the film-rental sample served, `restgraph capture enable --yes` run as a child process, then
 * inserts, updates and deletes made on another connection of the database reach a webhook (a real
 * receiver), GraphQL subscriptions (graphql-ws over a socket) and /v1/events exactly once each,
 * the objects as REST reads the rows and in the shape of restgraph's own writes' events; a write
 * through restgraph has its one event (its row is not captured too); text, uuid and composite keys
 * name their records; `capture disable` leaves no trigger.
 */

const it = itWithFolder('rg-capture-serve-');

/** An event as each channel gives it: its type, and its object and previous values. */
interface Seen {
  type: string;
  object: Record<string, unknown>;
  previous?: Record<string, unknown> | undefined;
}

const KEYS: Record<string, (o: Record<string, unknown>) => string> = {
  language: (o) => String(o.name),
  country: (o) => String(o.country_code),
  film: (o) => String(o.film_id),
  rental: (o) => String(o.rental_id),
  film_actor: (o) => `${String(o.actor_id)},${String(o.film_id)}`,
};

/** `film.updated 2`: an event named by its type and its record's key. */
function named(event: Seen): string {
  const resource = event.type.slice(0, event.type.lastIndexOf('.'));
  return `${event.type} ${KEYS[resource]?.(event.object) ?? '?'}`;
}

/** The subscriptions followed, each selecting the record's key and a field or two. */
const SUBSCRIPTIONS: Record<string, string> = {
  'country.created': 'countryCreated { country_code name }',
  'film.created': 'filmCreated { film_id title }',
  'film.updated': 'filmUpdated { film_id title }',
  'film.deleted': 'filmDeleted { film_id title }',
  'rental.created': 'rentalCreated { rental_id returned_at }',
  'rental.updated': 'rentalUpdated { rental_id returned_at }',
  'film_actor.created': 'filmActorCreated { actor_id film_id character_name }',
  'film_actor.updated': 'filmActorUpdated { actor_id film_id character_name }',
  'film_actor.deleted': 'filmActorDeleted { actor_id film_id character_name }',
  'language.created': 'languageCreated { language_id name }',
};

const RENTAL = '6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f';

async function cli(folder: CliFolder, sample: CaptureSample, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return finish(startCli(folder.path, args, { RESTGRAPH_SYSTEM_SCHEMA: sample.systemSchema }, folder.children));
}

/** The triggers on the sample's tables, as the database lists them (pg_trigger; SQLite's sqlite_master). */
async function triggerNames(sample: CaptureSample): Promise<string[]> {
  if (sample.database.dialect === 'sqlite') return (await sample.database.query<{ name: string }>("select name from sqlite_master where type = 'trigger' order by name")).map((r) => r.name);
  return (
    await sample.database.query<{ name: string }>(
      'select t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = ? and not t.tgisinternal order by 1',
      [sample.databaseSchema],
    )
  ).map((r) => r.name);
}

describe('capture while serving: writes of other programs reach every channel once', () => {
  it(
    'an INSERT, UPDATE and DELETE made on another connection reach a webhook, GraphQL subscriptions and /v1/events exactly once, as restgraph writes them',
    async ({ folder }) => {
      const sample = await createCaptureSample(folder.path);
      const schemaFile = join(folder.path, 'film-rental.yaml');
      writeFileSync(schemaFile, sample.schemaText);
      const receiver = await WebhookReceiver.start();
      let server: ListeningApp | undefined;
      let stream: SseReader | undefined;
      let client: SubscriptionClient | undefined;
      try {
        // Rows there before capture is enabled: no event.
        await sample.outside("insert into language (name) values ('English')");
        await sample.outside("insert into customer (customer_id, first_name, last_name) values (1, 'Ada', 'Lovelace')");
        await sample.outside("insert into film (film_id, title, language_id, replacement_cost) values (1, 'Alien', 1, 19.99)");
        await sample.outside("insert into actor (first_name, last_name) values ('Sigourney', 'Weaver')");
        await sample.outside("insert into inventory (inventory_id, film_id, store_code) values (1, 1, 'A')");

        server = await listenApp(sample.database.url, {
          schema: schemaFile,
          systemSchema: sample.systemSchema,
          webhooks: { allowHosts: ['127.0.0.1'], retryScheduleSeconds: [0.1], pollIntervalMs: 50 },
          // PostgreSQL: no poll within the test; the triggers' notification alone wakes the relay (its channel agrees with the server's).
          ...(sample.database.dialect === 'postgres' ? { events: { pollIntervalMs: 600_000 } } : {}),
        });
        const { base } = server;
        expect((await send(base, 'POST', '/v1/webhooks', { url: receiver.url('/hook'), events: ['*'] })).status).toBe(201);
        stream = await SseReader.open(eventsUrl(base), { authorization: ADMIN });
        const before = server.app.restgraph.events.subscriberCount;
        client = wsClient(base, { connectionParams: { Authorization: ADMIN } });
        const recorders = new Map<string, Recorder>();
        for (const [type, selection] of Object.entries(SUBSCRIPTIONS)) recorders.set(type, client.run(`subscription { ${selection} }`));
        await waitUntil(() => (server?.app.restgraph.events.subscriberCount ?? 0) >= before + recorders.size, 'the subscriptions to be live');

        const enabled = await cli(folder, sample, ['capture', 'enable', schemaFile, '-d', sample.database.url, '--yes']);
        expect(enabled.stderr).toBe('');
        expect(enabled.code).toBe(0);

        // restgraph's own writes: one event each, their rows not captured again.
        const own = await send(base, 'POST', '/language', { name: 'Own' });
        expect(own.status).toBe(201);
        const patched = await send(base, 'PATCH', '/film/1', { title: 'Alien (1979)' });
        expect(patched.status).toBe(200);

        // Another program's writes, on connections of its own.
        await sample.outside("insert into country (country_code, name) values ('FR', 'France')");
        await sample.outside("insert into film (film_id, title, language_id, replacement_cost, rating) values (2, 'Aliens', 1, 20.50, 'R')");
        await sample.outside("update film set title = 'Aliens (1986)' where film_id = 2");
        await sample.outside('delete from film where film_id = 2');
        await sample.outside("insert into film (film_id, title, language_id, replacement_cost) values (3, 'Alien 3', 1, 18.00)");
        await sample.outside('insert into rental (rental_id, inventory_id, customer_id) values (?, 1, 1)', [RENTAL]);
        await sample.outside(`update rental set returned_at = ${sample.database.dialect === 'postgres' ? "'2099-01-02T03:04:05Z'" : "'2099-01-02T03:04:05.000Z'"} where rental_id = ?`, [RENTAL]);
        await sample.outside("insert into film_actor (actor_id, film_id, character_name) values (1, 1, 'Ripley')");
        await sample.outside("update film_actor set character_name = 'Ellen Ripley' where actor_id = 1 and film_id = 1");
        await sample.outside('insert into film_actor (actor_id, film_id) values (1, 3)');
        await sample.outside('delete from film_actor where actor_id = 1 and film_id = 3');
        // Last: every change before it is relayed before it (capture order).
        await sample.outside("insert into language (name) values ('Sentinel')");

        const expected = [
          'language.created Own',
          'film.updated 1',
          'country.created FR',
          'film.created 2',
          'film.updated 2',
          'film.deleted 2',
          'film.created 3',
          `rental.created ${RENTAL}`,
          `rental.updated ${RENTAL}`,
          'film_actor.created 1,1',
          'film_actor.updated 1,1',
          'film_actor.created 1,3',
          'film_actor.deleted 1,3',
          'language.created Sentinel',
        ];
        const last = (events: readonly Seen[]): boolean => events.some((e) => named(e) === 'language.created Sentinel');

        await stream.until((e) => e.type === 'language.created' && e.body.data.object.name === 'Sentinel', 'the last event on /v1/events');
        const streamed: Seen[] = stream.events.map((e) => ({ type: e.type, object: e.body.data.object, previous: e.body.data.previous }));
        expect(streamed.map(named)).toEqual(expected);
        // occurredAt as restgraph's own events have it (webhooks compare it with their creation time).
        for (const event of stream.events) expect(event.body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

        const delivered = (): Seen[] =>
          receiver.to('/hook').map((r) => {
            const body = JSON.parse(r.body) as { type: string; data: { object: Record<string, unknown>; previous?: Record<string, unknown> } };
            return { type: body.type, object: body.data.object, previous: body.data.previous };
          });
        await receiver.waitFor(() => last(delivered()), 'the last webhook delivery', 30_000);
        // Deliveries may overtake each other; each event once.
        expect(delivered().map(named).sort()).toEqual([...expected].sort());

        for (const [type, recorder] of recorders) {
          const field = SUBSCRIPTIONS[type]?.split(' ')[0] ?? '';
          const wanted = expected.filter((n) => n.startsWith(`${type} `));
          await waitUntil(() => recorder.data.length >= wanted.length, `${wanted.length} result(s) of ${field}`);
          const got = recorder.data.map((d) => named({ type, object: (d as Record<string, Record<string, unknown>>)[field] ?? {} }));
          expect(got).toEqual(wanted);
        }

        // The objects as REST reads the rows; previous as restgraph's own update gives it.
        const byName = new Map(streamed.map((e) => [named(e), e]));
        const read = async (path: string): Promise<Record<string, unknown>> => {
          const response = await send(base, 'GET', path);
          expect(response.status).toBe(200);
          return response.json();
        };
        expect(byName.get('film.created 3')?.object).toEqual(await read('/film/3'));
        expect(byName.get('country.created FR')?.object).toEqual(await read('/country/FR'));
        expect(byName.get(`rental.updated ${RENTAL}`)?.object).toEqual(await read(`/rental/${RENTAL}`));
        expect(byName.get(`rental.updated ${RENTAL}`)?.previous).toEqual({ returned_at: null });
        expect(byName.get('film_actor.updated 1,1')?.object).toEqual(await read('/film_actor/1,1'));
        expect(byName.get('film_actor.updated 1,1')?.previous).toEqual({ character_name: 'Ripley' });
        const ownUpdate = byName.get('film.updated 1');
        const theirUpdate = byName.get('film.updated 2');
        expect(ownUpdate?.object).toEqual(await read('/film/1'));
        expect(ownUpdate?.previous).toEqual({ title: 'Alien' });
        expect(theirUpdate?.previous).toEqual({ title: 'Aliens' });
        expect(Object.keys(theirUpdate?.object ?? {})).toEqual(Object.keys(ownUpdate?.object ?? {}));
        expect(byName.get('film.deleted 2')?.object).toMatchObject({ film_id: 2, title: 'Aliens (1986)', rating: 'R' });
        expect(byName.get('language.created Own')?.object).toEqual(own.json());

        // The outbox names each record by its key, whatever its type (text, uuid, composite).
        const outbox = sample.database.dialect === 'postgres' ? `"${sample.systemSchema}"._restgraph_events` : '_restgraph_events';
        const recordIds = await sample.database.query<{ type: string; recordId: unknown }>(`select type, "recordId" as "recordId" from ${outbox} order by id`);
        expect(recordIds.filter((r) => !r.type.startsWith('language.') && !r.type.startsWith('film.')).map((r) => `${r.type} ${String(r.recordId)}`)).toEqual([
          'country.created FR',
          `rental.created ${RENTAL}`,
          `rental.updated ${RENTAL}`,
          'film_actor.created 1,1',
          'film_actor.updated 1,1',
          'film_actor.created 1,3',
          'film_actor.deleted 1,3',
        ]);

        const disabled = await cli(folder, sample, ['capture', 'disable', schemaFile, '-d', sample.database.url]);
        expect(disabled.code).toBe(0);
        expect(await triggerNames(sample)).toEqual([]);
      } finally {
        await client?.dispose();
        stream?.close();
        await server?.close();
        await receiver.close();
        await sample.drop();
      }
    },
    CLI_TEST_TIMEOUT_MS * 2,
  );
});
