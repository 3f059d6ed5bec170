import { createHash } from 'node:crypto';
import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { visibilityKey } from '../core/access-policy.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { GraphqlContext } from './graphql-context.js';
import { ConnectionQueue, QueuedBytes, type QueueLimits } from './queued-bytes.js';
import { SharedMessage } from './shared-message.js';
import { Group, type SharedResult } from './subscription-group.js';
import type { SubscriptionItem } from './subscriptions.js';

export type { SharedResult } from './subscription-group.js';

export interface SubscriptionGroupsOptions {
  /** Makes a result what clients get (error codes), once per shared result. */
  format: (result: ExecutionResult) => ExecutionResult;
  /** What members that do not keep up may hold queued. */
  queue: QueueLimits;
}

/** Variables longer than this (as JSON) are keyed by their digest, not their text. */
const LONG_VARIABLES = 256;

/**
 * Subscriptions asking the same thing share one execution per event (as Hasura multiplexes live
 * queries). Subscribers are grouped by what decides their results: the same document (the
 * prepared document, cached by its text), operation name and variables, and the same visibility
 * (the access rules' outcome for their credentials: see visibilityKey). A group is one subscriber
 * of the event dispatcher (indexed by record id when the operation names one, so an event touches
 * only the groups it matches); each event is executed once for the group, its result formatted
 * and serialised once ({@link SharedMessage}), and the same message handed to each member, in
 * bounded steps per event-loop turn (the dispatcher's delivery queue), so many members never hold
 * up writes.
 *
 * Backpressure is per member: a member whose connection is congested queues its messages
 * (references to the shared ones), bounded by the dispatcher's lag limits in events and by
 * {@link QueuedBytes} in bytes, per connection and for the whole server; a member past a bound gets
 * one slow-consumer error and ends, as a lone subscriber would. The group itself, when its
 * executions fall that far behind the writes, ends every member the same way. A group ends with its
 * last member.
 */
export class SubscriptionGroups {
  readonly #schema: SchemaModel;
  readonly #format: SubscriptionGroupsOptions['format'];
  readonly #groups = new Map<string, Group>();
  readonly #documentIds = new WeakMap<DocumentNode, number>();
  #nextDocumentId = 0;
  /** The results handed out by groups (transports pass them on unchanged: they are formatted). */
  readonly #shared = new WeakSet<object>();
  /** What the members of every connection hold queued, and its bounds. */
  readonly queued: QueuedBytes;

  constructor(schema: SchemaModel, options: SubscriptionGroupsOptions) {
    this.#schema = schema;
    this.#format = options.format;
    this.queued = new QueuedBytes(options.queue);
  }

  /** Whether `result` is a group's shared result, formatted already. */
  isShared(result: unknown): boolean {
    return typeof result === 'object' && result !== null && this.#shared.has(result);
  }

  /** A connection's queue, for a transport to give each sink of one connection. */
  connection(): ConnectionQueue {
    return new ConnectionQueue();
  }

  /** Groups running now (for tests and metrics). */
  get size(): number {
    return this.#groups.size;
  }

  /**
   * The subscription of a prepared subscription operation: a member of its group (made now when
   * there is none), or the errors of its subscribe step (refused access, a bad argument).
   */
  async subscribe(args: ExecutionArgs & { contextValue: GraphqlContext }): Promise<AsyncGenerator<SharedResult, undefined, undefined> | ExecutionResult> {
    const sink = args.contextValue.sink;
    const dispatcher = args.contextValue.events;
    if (dispatcher === undefined) throw new Error('subscriptions need the event dispatcher');
    const key = this.#key(args);
    let group = this.#groups.get(key);
    if (group === undefined) {
      // The subscribe step runs once per group: the Subscription field's access check and its
      // event source (subscriptions.ts).
      // The group's members are the clients of its one dispatcher subscription.
      let members: () => number = () => 0;
      const stream = await createSourceEventStream({ ...args, contextValue: { ...args.contextValue, listeners: () => members() } });
      if (!(Symbol.asyncIterator in stream)) return this.#format(stream);
      // The Subscription fields' event sources (subscriptions.ts) yield subscription items.
      const source = stream[Symbol.asyncIterator]() as AsyncIterator<SubscriptionItem>;
      group = this.#groups.get(key);
      if (group === undefined) {
        group = new Group(dispatcher, source, this.queued, {
          // graphql-js, not a compiled execution: each group would compile its own document (one a
          // watched id, say), run a few times a second, never hot enough to be optimised; graphql-js's
          // one code path for all of them is (measured: 215 against 263 µs of server CPU per update
          // delivered to 5 subscribers, docs/performance.md).
          execute: (item) => execute({ ...args, rootValue: item }),
          format: (result, final) => {
            const formatted = this.#format(result);
            this.#shared.add(formatted);
            return new SharedMessage(formatted, final);
          },
          ended: () => {
            if (this.#groups.get(key) === group) this.#groups.delete(key);
          },
        });
        this.#groups.set(key, group);
        const made = group;
        members = () => made.size;
      } else {
        // Another subscriber made the group while this one waited: this source is not needed.
        await source.return?.();
      }
    }
    return group.join(sink);
  }

  #key(args: ExecutionArgs & { contextValue: GraphqlContext }): string {
    let documentId = this.#documentIds.get(args.document);
    if (documentId === undefined) this.#documentIds.set(args.document, (documentId = ++this.#nextDocumentId));
    let variables = JSON.stringify(args.variableValues ?? {});
    if (variables.length > LONG_VARIABLES) variables = createHash('sha256').update(variables).digest('base64');
    return `${documentId}\n${args.operationName ?? ''}\n${variables}\n${visibilityKey(args.contextValue.operation.principal, this.#schema)}`;
  }
}
