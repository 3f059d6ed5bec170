import { createHash } from 'node:crypto';
import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { visibilityKey } from '../core/access-policy.js';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { GraphqlContext, MemberSink } from './graphql-context.js';
import { ConnectionQueue, QueuedBytes, type QueueHolder, type QueueLimits } from './queued-bytes.js';
import { SharedMessage } from './shared-message.js';
import type { SubscriptionItem } from './subscriptions.js';
import type { PromiseOrValue } from '../promise-or-value.js';

/** What a subscriber without a sink gets from its iterator: one result of its operation, shared with every subscriber of its group. */
export type SharedResult = ExecutionResult;


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

interface Member extends QueueHolder {
  /** Messages not read (or, with a sink, not written) yet, from `head` on. */
  queue: SharedMessage[];
  head: number;
  /** Events up to this id came before it joined: not its. */
  from: number;
  wake: (() => void) | undefined;
  done: boolean;
  /** Where its results are written at once; without one, its iterator hands them over. */
  sink: MemberSink | undefined;
  /** Its connection's queue (a queue of its own without a sink). */
  connection: ConnectionQueue;
  /** A write to a congested sink is waiting for the network: the next ones wait in the queue. */
  waiting: boolean;
  /** Since when it has taken nothing: its iterator's last hand-over, or when its sink congested or drained (performance.now()). */
  tookAt: number;
}

interface GroupHooks {
  execute: (item: SubscriptionItem) => PromiseOrValue<ExecutionResult>;
  /** `final`: the message that ends its members (see SharedMessage.final). */
  format: (result: ExecutionResult, final: boolean) => SharedMessage;
  ended: () => void;
}

/** One execution per event for the members of one group (see {@link SubscriptionGroups}). */
class Group {
  readonly #dispatcher: EventDispatcher;
  readonly #source: AsyncIterator<SubscriptionItem>;
  readonly #queued: QueuedBytes;
  readonly #hooks: GroupHooks;
  readonly #members = new Set<Member>();
  /** The slow-consumer message. */
  #overflow: SharedMessage | undefined;
  #closed = false;

  constructor(dispatcher: EventDispatcher, source: AsyncIterator<SubscriptionItem>, queued: QueuedBytes, hooks: GroupHooks) {
    this.#dispatcher = dispatcher;
    this.#source = source;
    this.#queued = queued;
    this.#hooks = hooks;
    void this.#run();
  }

  /** Its members now. */
  get size(): number {
    return this.#members.size;
  }

  /**
   * A new member, given the events committed from now on. With a sink its results are written
   * there, and its iterator only ends when it does (yielding nothing); without one, the iterator
   * yields them.
   */
  join(sink?: MemberSink): AsyncGenerator<SharedResult, undefined, undefined> {
    const member: Member = {
      queue: [],
      head: 0,
      from: this.#dispatcher.lastId,
      wake: undefined,
      done: this.#closed,
      sink,
      connection: sink?.queue ?? new ConnectionQueue(),
      waiting: false,
      tookAt: performance.now(),
      queuedBytes: 0,
      cut: () => this.#cut(member),
    };
    if (!this.#closed) this.#members.add(member);
    const done = (): IteratorResult<SharedResult, undefined> => ({ done: true, value: undefined });
    const leave = (): void => {
      member.done = true;
      this.#drop(member);
      this.#leave(member);
      wake(member);
    };
    const iterator: AsyncGenerator<SharedResult, undefined, undefined> = {
      next: async () => {
        for (;;) {
          if (member.sink === undefined && member.head < member.queue.length) {
            const message = this.#take(member);
            member.tookAt = performance.now();
            return { done: false, value: message.result };
          }
          if (member.done && member.head >= member.queue.length) {
            leave();
            return done();
          }
          await new Promise<void>((resolve) => (member.wake = resolve));
        }
      },
      return: () => {
        leave();
        return Promise.resolve(done());
      },
      throw: (error: unknown) => {
        leave();
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  #leave(member: Member): void {
    if (!this.#members.delete(member) || this.#members.size > 0 || this.#closed) return;
    // The last member left: the group stops listening.
    this.#close();
  }

  #isClosed(): boolean {
    return this.#closed;
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#hooks.ended();
    void this.#source.return?.();
  }

  /** Executes each event once and hands the result to the members, one event's fan-out at a time. */
  async #run(): Promise<void> {
    let previous: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        const next = await this.#source.next();
        if (next.done === true || this.#closed) break;
        const item = next.value;
        // (Compiled executions of fields alone answer at once: no turn of the microtask queue for them.)
        const executed = this.#hooks.execute(item);
        const message = this.#hooks.format(executed instanceof Promise ? await executed : executed, 'overflow' in item);
        // At most one fan-out queued per group: when members are many, executions wait for it,
        // and events wait in the source's bounded queue (then the dispatcher's lag limit applies).
        await previous;
        // (Closed meanwhile? The last member may have left during the awaits.)
        if (this.#isClosed()) break;
        previous = this.#fanOut('overflow' in item ? Infinity : item.event.id, message, 'overflow' in item);
        if ('overflow' in item) break;
      }
      await previous;
    } finally {
      this.#close();
      for (const member of this.#members) {
        member.done = true;
        wake(member);
      }
      this.#members.clear();
    }
  }

  /** Queues the hand-out of one message to every member (one step each); resolves when done. */
  #fanOut(eventId: number, message: SharedMessage, last: boolean): Promise<void> {
    return new Promise((resolve) => {
      const members = this.#members;
      const give = (member: Member): void => this.#give(member, eventId, message, last);
      this.#dispatcher.deliveries.add(
        (function* handOut(): Generator<void> {
          try {
            for (const member of members) {
              give(member);
              yield;
            }
          } finally {
            resolve();
          }
        })(),
      );
    });
  }

  #give(member: Member, eventId: number, message: SharedMessage, last: boolean): void {
    if (member.done || eventId <= member.from) return;
    const sink = member.sink;
    if (sink !== undefined && !last && !member.waiting && member.head === member.queue.length && sink.open && !sink.congested) {
      // The usual case: written at once, nothing kept.
      sink.write(message);
      return;
    }
    if (last) {
      // The group ends (it fell too far behind the writes): each member gets what it holds, then this.
      member.queue.push(message);
      member.done = true;
      this.#pass(member);
      return;
    }
    const behind = member.queue.length - member.head;
    if (
      (behind >= this.#dispatcher.maxLag && performance.now() - member.tookAt >= this.#dispatcher.maxPausedMs) ||
      behind >= this.#dispatcher.maxLagReading ||
      !this.#queued.admit(member.connection, message)
    ) {
      // Too far behind, and taking nothing (a reader in a burst keeps taking), or holding more
      // than its connection (or the server) may: it ends with one error saying so.
      this.#cut(member);
      return;
    }
    this.#queued.hold(member.connection, member, message);
    member.queue.push(message);
    this.#pass(member);
  }

  /**
   * Ends a member as a slow consumer: its backlog goes, and it gets one error saying so. It leaves
   * as any member does: the group ends with its last member (a group left with no member would go
   * on executing every event for nobody).
   */
  #cut(member: Member): void {
    if (member.done && member.queue[member.queue.length - 1]?.final === true) return;
    this.#drop(member);
    member.queue.push(this.#overflowMessage());
    member.done = true;
    this.#leave(member);
    this.#pass(member);
  }

  /** Hands what a member holds on: to its sink, or wakes its iterator. */
  #pass(member: Member): void {
    if (member.sink === undefined) wake(member);
    else this.#flush(member, member.sink);
  }

  /** The next message of a member's queue, released from the queue bounds. */
  #take(member: Member): SharedMessage {
    const message = member.queue[member.head++] as SharedMessage;
    if (!message.final) this.#queued.release(member.connection, member, message);
    if (member.head === member.queue.length) {
      // Emptied in place: no new array per delivery.
      member.queue.length = 0;
      member.head = 0;
    }
    return message;
  }

  /** Drops what a member holds queued. */
  #drop(member: Member): void {
    while (member.head < member.queue.length) this.#take(member);
  }

  /**
   * Writes a member's queued messages to its sink, until the sink is congested: then the one
   * written last says when the network has taken it, and the writing goes on from there. The
   * member's iterator ends once it is done and nothing is left to write.
   */
  #flush(member: Member, sink: MemberSink): void {
    while (!member.waiting && member.head < member.queue.length) {
      if (!sink.open) {
        // The transport is gone: what is left is nobody's.
        member.done = true;
        this.#drop(member);
        break;
      }
      const message = this.#take(member);
      if (sink.congested) {
        member.waiting = true;
        // Taking nothing from now until the network has taken this write.
        member.tookAt = performance.now();
        sink.write(message, () => {
          member.waiting = false;
          member.tookAt = performance.now();
          this.#flush(member, sink);
        });
      } else sink.write(message);
    }
    if (member.done && member.head === member.queue.length) wake(member);
  }

  /** The slow-consumer message (the Subscription field's resolver turns the overflow item into it). */
  #overflowMessage(): SharedMessage {
    if (this.#overflow === undefined) {
      const result = this.#hooks.execute({ overflow: true });
      this.#overflow = this.#hooks.format(result instanceof Promise ? { data: null } : result, true);
    }
    return this.#overflow;
  }
}

function wake(member: Member): void {
  const resolve = member.wake;
  member.wake = undefined;
  resolve?.();
}
