import pg from 'pg';
import { describe, expect } from 'vitest';
import { eventsUrl, listenApp, SseReader } from './helpers/event-stream.js';
import { create, scaleOutTest } from './helpers/scale-out.js';
import { TEST_DIALECT } from './helpers/test-database.js';
import { waitUntil } from './helpers/webhook-receiver.js';

/**
 * On PostgreSQL, transactions commit in any order: an event id can become visible after a later
 * one (as when several instances write to one database). The outbox readers must not pass an id
 * that a transaction still running may yet commit. (The other scale-out files: scale-out.test.ts,
 * scale-out-webhooks.test.ts, scale-out-webhooks-kill.test.ts.)
 */

// Each test has its own database (the `cluster` fixture's; no instance is started here).
const it = scaleOutTest;

describe.skipIf(TEST_DIALECT !== 'postgres')('events committed out of id order (PostgreSQL)', () => {
  /**
   * A writer elsewhere holds event id N in an open transaction while a later write commits N+1.
   * A stream must not pass N: it holds N+1 back until N's transaction ends, then sends N and N+1
   * in order (commit), or N+1 alone (rollback).
   */
  for (const outcome of ['commit', 'rollback'] as const) {
    it(`a stream holds a later event back while an earlier id is being written, then goes on (${outcome})`, async ({ cluster: { database } }) => {
      const server = await listenApp(database.url);
      const writer = new pg.Client({ connectionString: database.url });
      await writer.connect();
      const stream = await SseReader.open(eventsUrl(server.base, { types: 'user.created' }));
      let ahead: SseReader | undefined;
      try {
        await stream.waitFor((r) => r.comments.length > 0, 'the connected comment');
        // The held write: a row, then its event (the order restgraph writes them in).
        await writer.query('begin');
        const row = await writer.query<{ id: string }>(
          `insert into "users" ("name", "createdAt", "updatedAt") values ('Held', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z') returning "id"`,
        );
        const held = await writer.query<{ id: string }>(
          `insert into "_restgraph_events" ("type", "resource", "recordId", "data", "occurredAt") values ('user.created', 'users', $1, $2, '2026-01-01T00:00:00.000Z') returning "id"`,
          [Number(row.rows[0]?.id), JSON.stringify({ object: { id: Number(row.rows[0]?.id), name: 'Held' } })],
        );
        const heldId = Number(held.rows[0]?.id);
        const later = await create(server.base, 'Later');
        // Long enough for the later event to have been read (it is committed) and held back.
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect(stream.events.map((e) => e.id)).toEqual([]);

        // A reader resuming from an id this instance has not dispatched yet (it saw it through
        // another instance) gets only what comes after that id.
        if (outcome === 'commit') {
          ahead = await SseReader.open(eventsUrl(server.base, { types: 'user.created' }), { 'last-event-id': String(heldId + 1) });
          await ahead.waitFor((r) => r.comments.length > 0, 'the connected comment');
        }
        await writer.query(outcome);
        await waitUntil(() => stream.events.length >= (outcome === 'commit' ? 2 : 1), () => `the events after the ${outcome} (have ${JSON.stringify(stream.events.map((e) => e.id))})`);
        const expected = outcome === 'commit' ? [[heldId, 'Held'], [heldId + 1, 'Later']] : [[heldId + 1, 'Later']];
        expect(stream.events.map((e) => [e.id, e.body.data.object.name])).toEqual(expected);
        expect(later.name).toBe('Later');
        if (ahead !== undefined) {
          const next = await create(server.base, 'Next');
          await ahead.until((e) => e.body.data.object.id === next.id, 'the next event');
          expect(ahead.events.map((e) => e.id)).toEqual([heldId + 2]);
        }
      } finally {
        ahead?.close();
        stream.close();
        await writer.end();
        await server.close();
      }
    }, 30_000);
  }
});
