import DataLoader from 'dataloader';
import type { ListQuery } from '../core/list-query.js';
import type { AggregateGroup, AggregateQuery } from '../core/aggregate-query.js';
import type { OperationArgs } from 'graphql-http';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { OperationContext } from '../core/principal.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { AccountEmails } from '../core/accounts/account-emails.js';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import type { RelationModel, ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { ConnectionQueue } from './queued-bytes.js';
import type { SharedMessage } from './shared-message.js';
import type { RecordId } from '../schema/record-key.js';

/** What every resolver of one GraphQL request gets. */
export interface GraphqlContext extends Record<PropertyKey, unknown> {
  operations: ResourceOperations;
  /** The account operations, when the schema has accounts (docs/accounts.md). */
  accounts?: AccountOperations;
  /** Email verification and password reset of those accounts. */
  accountEmails?: AccountEmails;
  /** Who asks, and for which request: passed to every core operation. */
  operation: OperationContext;
  loaders: RequestLoaders;
  /** The event path, for subscriptions. */
  events?: EventDispatcher;
  /** What the operation was charged against the GraphQL budget, reported in its response. */
  charge?: GraphqlCharge;
  /** A subscription's clients, when several share its execution (SubscriptionGroups). */
  listeners?: () => number;
  /** Where a subscription's results can be written at once (its WebSocket), if anywhere. */
  sink?: MemberSink;
}

type Page = { records: StoredRecord[]; more: boolean };

/** Most parents one batched query serves; bigger batches are split. */
const MAX_BATCH = 500;

/**
 * Batch loaders of one request (DataLoader): the relation fields of every row at one level of a
 * query are loaded together, so a query's database round trips grow with its depth, not with the
 * number of rows. Created per request: nothing is cached across requests (or principals).
 */
export class RequestLoaders {
  readonly #operations: ResourceOperations;
  readonly #ctx: OperationContext;
  readonly #loaders = new Map<string, DataLoader<RecordId, unknown>>();

  readonly #cache: boolean;

  /**
   * `cache: false` for subscriptions: their context lives as long as the subscription, and each
   * event must see the rows as they are then (loads are still batched per event).
   */
  constructor(operations: ResourceOperations, ctx: OperationContext, options: { cache?: boolean } = {}) {
    this.#operations = operations;
    this.#ctx = ctx;
    this.#cache = options.cache ?? true;
  }

  /** Rows of `resource` by id, as the principal may see them (undefined when not visible). */
  byId(resource: ResourceModel): DataLoader<RecordId, StoredRecord | undefined> {
    return this.#loader(`id|${resource.name}`, async (ids) => {
      const found = await this.#operations.batch.getMany(this.#ctx, resource, ids);
      return ids.map((id) => found.get(id));
    });
  }

  /** A page of a hasMany relation per parent id, for one set of list arguments. */
  relatedPage(relation: RelationModel, query: ListQuery): DataLoader<RecordId, Page> {
    return this.#loader(`page|${relation.target}|${relation.foreignKey}|${queryKey(query)}`, async (ids) => {
      const pages = await this.#operations.batch.relatedPages(this.#ctx, relation, ids, query);
      return ids.map((id) => pages.get(id) ?? { records: [], more: false });
    });
  }

  /** The number of related rows per parent id under the filters. */
  relatedCount(relation: RelationModel, filters: ListQuery['filters']): DataLoader<RecordId, number> {
    return this.#loader(`count|${relation.target}|${relation.foreignKey}|${JSON.stringify(filters)}`, async (ids) => {
      const counts = await this.#operations.batch.relatedCounts(this.#ctx, relation, ids, filters);
      return ids.map((id) => counts.get(id) ?? 0);
    });
  }

  /** The aggregate of a hasMany relation per parent id (its groups), for one set of arguments and selected functions. */
  relatedAggregate(relation: RelationModel, query: AggregateQuery): DataLoader<RecordId, AggregateGroup[]> {
    return this.#loader(`aggregate|${relation.target}|${relation.foreignKey}|${JSON.stringify(query)}`, async (ids) => {
      const groups = await this.#operations.batch.relatedAggregates(this.#ctx, relation, ids, query);
      return ids.map((id) => groups.get(id) ?? []);
    });
  }

  #loader<V>(key: string, batch: (ids: readonly RecordId[]) => Promise<V[]>): DataLoader<RecordId, V> {
    let loader = this.#loaders.get(key) as DataLoader<RecordId, V> | undefined;
    if (loader === undefined) {
      loader = new DataLoader<RecordId, V>(batch, { maxBatchSize: MAX_BATCH, cache: this.#cache });
      this.#loaders.set(key, loader);
    }
    return loader;
  }
}

function queryKey(query: ListQuery): string {
  return JSON.stringify([query.filters, query.sort, query.limit, query.after, query.before, query.backward === true]);
}

/** What an operation cost and what is left of the budget: `extensions.rateLimit` of its response. */
export interface GraphqlCharge {
  cost: number;
  limit: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * Where a member's results can be written at once, each in its own message envelope, instead of
 * being handed over one by one through its transport's async iterator (graphql-ws: SubscriptionGroups
 * sinks). An async hand-over costs a handful of promises per member per event, and each waiting
 * member's promises outlive a young-generation collection, which then copies them all: with
 * thousands of members that copying dominated the collector's pauses.
 */
export interface MemberSink {
  /** Whether the transport can still take messages. */
  readonly open: boolean;
  /** Whether it holds data the network has not taken yet (a slow reader). */
  readonly congested: boolean;
  /** Its connection's queue: what the connection's subscriptions hold while it is congested. */
  readonly queue: ConnectionQueue;
  /** Writes one shared result (its bytes, in this member's envelope); `flushed`, when given, is called once the network has taken it. */
  write(message: SharedMessage, flushed?: () => void): void;
}

export type PreparedArgs = OperationArgs<GraphqlContext> & { contextValue: GraphqlContext };
