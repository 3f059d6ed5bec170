import { GraphQLID, GraphQLNonNull, type GraphQLFieldConfigMap, type GraphQLInputObjectType, type GraphQLObjectType } from 'graphql';
import { matchesFilter } from '../core/filter-expression/filter-evaluator.js';
import type { FilterCondition } from '../store/list-spec.js';
import type { WhereInput } from './where-input.js';
import { resourcesIn } from '../schema/version-view.js';
import { authorize } from '../core/access-policy.js';
import { assertFiltersUsable } from '../core/access-rules/field-reads.js';
import { SlowConsumerError } from '../errors.js';
import type { ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { GraphqlContext } from './graphql-context.js';
import { camel, idOf, pascal } from './schema-parts.js';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { Principal } from '../core/principal.js';
import type { StoredEvent } from '../store/event-store.js';
import type { RecordId } from '../schema/record-key.js';

/** Events a subscription holds in memory; beyond, delivery pauses (the dispatcher keeps its place). */
export const MAX_PENDING_EVENTS = 1000;

/** What a subscription's resolver receives: an event, or the end of a subscriber that fell behind. */
export type SubscriptionItem = { event: StoredEvent } | { overflow: true };

/**
 * The events of one GraphQL subscription as an async iterator, fed by the event dispatcher (the
 * same path as /v1/events and webhooks), filtered by the principal's access rules and the event
 * types, and when `recordId` is given indexed by it (an event of another record costs this
 * subscription nothing). At most {@link MAX_PENDING_EVENTS} wait in memory; beyond, delivery
 * pauses until it is read, and an iterator that falls too far behind (the dispatcher's lag limit)
 * gets one last item reporting it, then ends: it never holds up writes or other subscribers.
 */
export function eventIterator(
  dispatcher: EventDispatcher,
  principal: Principal,
  types: ReadonlySet<string>,
  recordId?: RecordId,
  listeners?: () => number,
  matches?: (event: StoredEvent) => boolean,
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
    ...(recordId === undefined ? {} : { recordId }),
    ...(listeners === undefined ? {} : { listeners }),
    deliver: (event) => {
      // A where: an event it does not match costs nothing more (no execution, no message).
      if (matches !== undefined && !matches(event)) return queue.length < MAX_PENDING_EVENTS;
      queue.push({ event });
      signal();
      return queue.length < MAX_PENDING_EVENTS;
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
        if (item !== undefined) {
          if (queue.length === MAX_PENDING_EVENTS / 2) subscription.resume();
          return { value: item, done: false };
        }
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
    'This subscription fell too far behind (it stopped reading while the events kept coming) and was ended; subscribe again (the events it missed are in GET /v1/events).',
  );
}

/**
 * The Subscription fields: `userCreated(where)`, `userUpdated(id, where)`, `userDeleted(id, where)`
 * for every resource, each an event iterator under the caller's access rules, resolving to the
 * event's object. A `where` (conditions on the record's own fields; `conditionOf` refuses relation
 * paths) is evaluated in memory on each event's record (the new one for updates, the one deleted for
 * deletes) before anything is executed; subscribers sharing an execution (SubscriptionGroups, keyed
 * by document and variables, so by their where) share this one evaluation.
 */
export function subscriptionFields(
  model: SchemaModel,
  objectOf: (resource: ResourceModel) => GraphQLObjectType,
  whereOf: (resource: ResourceModel) => GraphQLInputObjectType,
  conditionOf: (resource: ResourceModel, where: WhereInput | null | undefined) => FilterCondition | undefined,
): GraphQLFieldConfigMap<SubscriptionItem, GraphqlContext> {
  const subscription: GraphQLFieldConfigMap<SubscriptionItem, GraphqlContext> = {};
  for (const resource of resourcesIn(model, model.latestVersion)) {
    const object = objectOf(resource);
    for (const kind of ['created', 'updated', 'deleted'] as const) {
      const type = `${resource.singular}.${kind}`;
      subscription[`${camel(resource.singular)}${pascal(kind)}`] = {
        type: new GraphQLNonNull(object),
        description:
          kind === 'created'
            ? `Each ${resource.singular} created from now on.`
            : `Each ${resource.singular} ${kind} from now on (only the one with this id, if given)${kind === 'deleted' ? ', as it was' : ''}.`,
        args: {
          ...(kind === 'created' ? {} : { id: { type: GraphQLID } }),
          where: { type: whereOf(resource), description: `Only events whose ${resource.singular} matches (its own fields; no relation paths).` },
        },
        subscribe: (_root, args: { id?: string | null; where?: WhereInput | null }, ctx) => {
          if (ctx.events === undefined) throw new Error('subscriptions need the event dispatcher');
          // The same rules as queries: refused now if the resource may not be read at all, or if
          // where: tests a field the caller may not read on every row; rows and fields the rules
          // hide are never sent (the event dispatcher's eventSeenBy).
          authorize(ctx.operation.principal, resource, 'read');
          const id = args.id === undefined || args.id === null ? undefined : idOf(resource, args.id);
          const condition = conditionOf(resource, args.where);
          if (condition !== undefined) assertFiltersUsable(ctx.operation.principal, model, resource, [condition]);
          const matches = condition === undefined ? undefined : (event: StoredEvent) => matchesFilter(condition, event.data.object, resource);
          return eventIterator(ctx.events, ctx.operation.principal, new Set([type]), id, ctx.listeners, matches);
        },
        resolve: (item: SubscriptionItem) => {
          if ('overflow' in item) throw overflowError();
          return item.event.data.object;
        },
      };
    }
  }

  return subscription;
}
