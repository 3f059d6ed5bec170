import { describe, expect, it } from 'vitest';
import { send, waitUntil } from './helpers/event-stream.js';
import { BODY_ALIASES, laggingServer, rawSubscriber, writePosts, type RawSubscriber } from './helpers/subscription-clients.js';

/**
 * A subscription group (subscribers sharing one execution per event) whose members are all cut as
 * slow consumers must end with them: a group with no member left stops listening to the event
 * dispatcher, so nothing is executed for it any more. Each subscriber here asks with an operation
 * name of its own, so each is a group of one.
 */
describe('subscription groups whose members are cut as slow consumers (maxLag 20, paused 200 ms)', () => {
  const lagging = laggingServer(20, 200);

  it('every group ends once its last member is cut and its client goes, and /metrics counts the groups', { timeout: 90_000 }, async () => {
    const groups = (): number => lagging.server.app.restgraph.graphql.subscriptions.size;
    const subscribers: RawSubscriber[] = [];
    try {
      for (let n = 0; n < 8; n++) subscribers.push(await rawSubscriber(lagging.server, `subscription S${n} { postCreated { id ${BODY_ALIASES} } }`));
      expect(groups()).toBe(8);
      const metrics = await send(lagging.server.base, 'GET', '/metrics');
      expect(metrics.text).toMatch(/^restgraph_subscription_groups 8$/m);
      for (const subscriber of subscribers) subscriber.pause();
      await writePosts(lagging.server, lagging.author, 150, 'cut');
      // Every member is cut on the server while its client still does not read.
      await waitUntil(() => lagging.server.app.restgraph.events.subscriberCount === 0, 'every member to be cut as a slow consumer', 60_000);
    } finally {
      for (const subscriber of subscribers) subscriber.close();
    }
    await waitUntil(() => groups() === 0, `every group to end (${groups()} left)`, 10_000);
    const metrics = await send(lagging.server.base, 'GET', '/metrics');
    expect(metrics.text).toMatch(/^restgraph_subscription_groups 0$/m);
  });
});
