import type { ExecutionResult } from 'graphql';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { MemberSink } from './graphql-context.js';
import { ConnectionQueue, QueuedBytes, type QueueHolder } from './queued-bytes.js';
import { SharedMessage } from './shared-message.js';
import type { SubscriptionItem } from './subscriptions.js';
import type { PromiseOrValue } from '../promise-or-value.js';

/** What a subscriber without a sink gets from its iterator: one result of its operation, shared with every subscriber of its group. */
export type SharedResult = ExecutionResult;

/**
 * One group of {@link SubscriptionGroups} (subscription-groups.ts): the members that share one
 * operation, its variables and what their principals may see; one execution per event for all.
 */
export interface Member extends QueueHolder {
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

export interface GroupHooks {
  execute: (item: SubscriptionItem) => PromiseOrValue<ExecutionResult>;
  /** `final`: the message that ends its members (see SharedMessage.final). */
  format: (result: ExecutionResult, final: boolean) => SharedMessage;
  ended: () => void;
}

/** One execution per event for the members of one group (see {@link SubscriptionGroups}). */
export class Group {
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
