import { describe, expect, it } from 'vitest';
import { waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { BODY_ALIASES, laggingServer, pausedBesideHealthy, rawSubscriber, writePosts, type RawSubscriber } from './helpers/subscription-clients.js';

/**
 * What GraphQL subscribers that stop reading may make the server hold, in bytes: per connection
 * (events.maxQueuedBytesPerConnection) and for the whole server (events.maxQueuedBytes), on real
 * sockets. The lag limits in events (maxLag 10000, paused 10 s) are far away here: only the bytes
 * end the subscribers. Each event is ~120 kB (30 aliases of a 4000-character body).
 */

/** The most the server's subscription queues held while `work` ran (sampled every millisecond). */
async function mostQueuedDuring(server: ListeningApp, work: () => Promise<unknown>): Promise<number> {
  const queued = server.app.restgraph.graphql.subscriptions.queued;
  let most = queued.bytes;
  const sampler = setInterval(() => (most = Math.max(most, queued.bytes)), 1);
  try {
    await work();
    return most;
  } finally {
    clearInterval(sampler);
  }
}

/** Whether a raw subscriber's messages end with the slow-consumer error and completion. */
function endedAsSlowConsumer(subscriber: RawSubscriber): boolean {
  const messages = subscriber.messages;
  const error = messages.at(-2);
  return messages.at(-1)?.type === 'complete' && error?.payload?.errors?.[0]?.extensions?.code === 'slow-consumer';
}

const MIB = 1024 * 1024;
/** One event's message to the raw subscribers, and a little more (the JSON envelope). */
const EVENT = 130 * 1024;

describe('the bytes one connection may hold queued (maxQueuedBytesPerConnection 2 MiB)', () => {
  const lagging = laggingServer(10_000, 10_000, undefined, { maxQueuedBytesPerConnection: 2 * MIB });

  it('a connection that stops reading holds at most 2 MiB, then its subscription ends with slow-consumer; the reader beside it gets every event', { timeout: 90_000 }, async () => {
    const { slow, healthy, onHealthy, before } = await pausedBesideHealthy(lagging.server);
    try {
      let ids: string[] = [];
      const most = await mostQueuedDuring(lagging.server, async () => {
        const writing = writePosts(lagging.server, lagging.author, 300, 'bounded');
        writing.catch(() => undefined); // (awaited below)
        // Ended on the server while its client still does not read; nothing is held for it any
        // more. The client then reads again at once (the keep-alive ends a connection that answers
        // no ping for 12 to 24 s: a slow machine's 300 writes could take that long).
        await waitUntil(() => lagging.server.app.restgraph.events.subscriberCount === before, 'the server to end the slow subscription', 60_000);
        await waitUntil(() => lagging.server.app.restgraph.graphql.subscriptions.queued.bytes === 0, 'the ended subscription’s queue to be dropped');
        slow.resume();
        ids = await writing;
      });
      expect(most).toBeLessThanOrEqual(2 * MIB + EVENT);
      await onHealthy.waitForResults(300, 60_000);
      expect(onHealthy.data.map((d) => d.postCreated.id)).toEqual(ids);

      await waitUntil(() => slow.messages.some((m) => m.type === 'complete'), 'the slow subscription’s complete message', 60_000);
      expect(endedAsSlowConsumer(slow)).toBe(true);
      const delivered = slow.results().filter((r) => r.errors === undefined);
      // What the socket buffers took, and at most 2 MiB of queue behind them: far from all 300.
      expect(delivered.length).toBeLessThan(300);
      expect(delivered.map((r) => r.data?.postCreated.id)).toEqual(ids.slice(0, delivered.length));
    } finally {
      slow.close();
      await healthy.dispose();
    }
  });
});

describe('the bytes all connections may hold queued (maxQueuedBytes 3 MiB)', () => {
  const lagging = laggingServer(10_000, 10_000, undefined, { maxQueuedBytes: 3 * MIB });

  it('two connections that stop reading never make the server hold more than 3 MiB: the one holding most is cut first', { timeout: 90_000 }, async () => {
    // Distinct operation names: two groups, so their messages are not shared.
    const paused = [
      await rawSubscriber(lagging.server, `subscription A { postCreated { id ${BODY_ALIASES} } }`),
      await rawSubscriber(lagging.server, `subscription B { postCreated { id ${BODY_ALIASES} } }`),
    ];
    try {
      for (const subscriber of paused) subscriber.pause();
      let ids: string[] = [];
      const most = await mostQueuedDuring(lagging.server, async () => {
        const writing = writePosts(lagging.server, lagging.author, 150, 'total');
        writing.catch(() => undefined); // (awaited below)
        // Both ended while their clients do not read; they read again at once (see above).
        await waitUntil(() => lagging.server.app.restgraph.events.subscriberCount === 0, 'both paused subscriptions to be ended', 60_000);
        for (const subscriber of paused) subscriber.resume();
        ids = await writing;
      });
      expect(most).toBeLessThanOrEqual(3 * MIB + EVENT);
      await waitUntil(() => paused.every((s) => s.messages.some((m) => m.type === 'complete')), 'both complete messages', 60_000);
      for (const subscriber of paused) {
        expect(endedAsSlowConsumer(subscriber)).toBe(true);
        const delivered = subscriber.results().filter((r) => r.errors === undefined);
        expect(delivered.map((r) => r.data?.postCreated.id)).toEqual(ids.slice(0, delivered.length));
      }
    } finally {
      for (const subscriber of paused) subscriber.close();
    }
  });
});
