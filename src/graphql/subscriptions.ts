import { SlowConsumerError } from '../errors.js';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { Principal } from '../core/principal.js';
import type { StoredEvent } from '../store/event-store.js';

/** Events a subscription may have waiting before it is ended as too slow. */
export const MAX_PENDING_EVENTS = 1000;

/** What a subscription's resolver receives: an event, or the end of a subscriber that fell behind. */
export type SubscriptionItem = { event: StoredEvent } | { overflow: true };

/**
 * The events of one GraphQL subscription as an async iterator, fed by the event dispatcher (the
 * same path as /v1/events and webhooks), filtered by the principal's access rules, the event
 * types and `accept`. A subscriber that leaves more than {@link MAX_PENDING_EVENTS} waiting gets
 * one last item that reports the overflow, then the iterator ends: it never holds up writes or
 * other subscribers.
 */
export function eventIterator(
  dispatcher: EventDispatcher,
  principal: Principal,
  types: ReadonlySet<string>,
  accept: (event: StoredEvent) => boolean,
): AsyncIterableIterator<SubscriptionItem> {
  const queue: SubscriptionItem[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const signal = (): void => {
    wake?.();
    wake = undefined;
  };
  const subscription = dispatcher.subscribe({
    principal,
    types,
    deliver: (event) => {
      if (!accept(event)) return true;
      queue.push({ event });
      signal();
      return queue.length <= MAX_PENDING_EVENTS;
    },
    close: (reason) => {
      if (reason === 'slow-consumer') {
        queue.length = 0;
        queue.push({ overflow: true });
      }
      done = true;
      signal();
    },
  });
  const finish = (): Promise<IteratorResult<SubscriptionItem>> => {
    done = true;
    queue.length = 0;
    subscription.unsubscribe();
    signal();
    return Promise.resolve({ value: undefined, done: true });
  };
  const iterator: AsyncIterableIterator<SubscriptionItem> = {
    async next(): Promise<IteratorResult<SubscriptionItem>> {
      for (;;) {
        const item = queue.shift();
        if (item !== undefined) return { value: item, done: false };
        if (done) return finish();
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    return: finish,
    throw: async (error: unknown) => {
      await finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** The error a subscriber that fell too far behind receives before its subscription ends. */
export function overflowError(): SlowConsumerError {
  return new SlowConsumerError(
    `This subscription fell more than ${MAX_PENDING_EVENTS} events behind and was ended; subscribe again (the events it missed are in GET /v1/events).`,
  );
}
