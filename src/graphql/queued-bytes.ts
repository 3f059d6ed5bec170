import type { SharedMessage } from './shared-message.js';

/**
 * What one queue slot costs beside the message it points to: the array slot and its share of the
 * array's growth. The messages themselves are shared by every member holding them.
 */
const SLOT_BYTES = 16;

/** A subscriber's part of a connection's queue: what it holds, and how it is ended. */
export interface QueueHolder {
  /** Bytes of the messages it holds queued (each counted in full, as it would be written). */
  queuedBytes: number;
  /** Ends it as a slow consumer: what it holds is dropped (and released) at once. */
  cut(): void;
}

/** The messages the subscribers of one connection hold queued, waiting for the network. */
export class ConnectionQueue {
  /** Bytes queued for this connection: each message counted in full for each subscriber holding it. */
  bytes = 0;
  /** Its subscribers holding anything. */
  readonly holders = new Set<QueueHolder>();
}

/** The limits on queued subscription messages (see {@link QueuedBytes}). */
export interface QueueLimits {
  /** Most bytes of messages the subscriptions of one connection may hold queued. */
  perConnection: number;
  /** Most bytes all queues of the server may hold (each message counted once, plus the slots). */
  total: number;
}

/**
 * Bounds what subscribers that do not read may make the server hold. A subscriber whose connection
 * takes its messages holds nothing: they are written at once. One whose connection is congested (a
 * client that stopped reading, or reads slowly) queues them, and the queue is bounded twice:
 *
 * - per connection, in the bytes that would be written: a subscriber whose message would take its
 *   connection over `perConnection` is ended as a slow consumer (its queue dropped);
 * - for the whole server, in the memory the queues pin: each message once, however many queues
 *   hold it (messages are shared by the members of a group), plus each slot. When a message would
 *   take the server over `total`, the connection holding the most is cut (all its lagging
 *   subscribers), and the next, until it fits; when the subscriber's own connection is the one
 *   holding the most, that subscriber is ended instead.
 *
 * Ended subscribers get one `slow-consumer` error; the others go on. Checked only when a message
 * is queued, never on the path of a subscriber that keeps up.
 */
export class QueuedBytes {
  readonly limits: Readonly<QueueLimits>;
  #bytes = 0;
  /** The connections holding anything. */
  readonly #queued = new Set<ConnectionQueue>();

  constructor(limits: QueueLimits) {
    this.limits = Object.freeze({ ...limits });
  }

  /** Bytes the queues pin now: every queued message once, plus the slots. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Whether `holder`, a subscriber of `connection`, may queue `message`. Makes room first when the
   * server is full, by cutting the subscribers of the connections holding most. False: `holder`
   * must be ended instead.
   */
  admit(connection: ConnectionQueue, message: SharedMessage): boolean {
    const size = message.size;
    if (connection.bytes + size > this.limits.perConnection) return false;
    for (;;) {
      const needed = SLOT_BYTES + (message.holders === 0 ? size : 0);
      if (this.#bytes + needed <= this.limits.total) return true;
      const heaviest = this.#heaviest();
      if (heaviest === undefined || heaviest === connection) return false;
      for (const holder of [...heaviest.holders]) holder.cut();
      // Cutting releases everything it held; should anything be left, it is not chosen again.
      this.#queued.delete(heaviest);
    }
  }

  /** `holder` of `connection` queues `message` (admitted, or the one message that says it was ended). */
  hold(connection: ConnectionQueue, holder: QueueHolder, message: SharedMessage): void {
    const size = message.size;
    if (message.holders++ === 0) this.#bytes += size;
    this.#bytes += SLOT_BYTES;
    connection.bytes += size;
    holder.queuedBytes += size;
    connection.holders.add(holder);
    this.#queued.add(connection);
  }

  /** `holder` of `connection` no longer holds `message` (written, or dropped). */
  release(connection: ConnectionQueue, holder: QueueHolder, message: SharedMessage): void {
    const size = message.size;
    if (--message.holders === 0) this.#bytes -= size;
    this.#bytes -= SLOT_BYTES;
    connection.bytes -= size;
    holder.queuedBytes -= size;
    if (holder.queuedBytes <= 0) {
      connection.holders.delete(holder);
      if (connection.holders.size === 0) this.#queued.delete(connection);
    }
  }

  /** The connection holding the most bytes (a scan: only when the server is full). */
  #heaviest(): ConnectionQueue | undefined {
    let heaviest: ConnectionQueue | undefined;
    for (const connection of this.#queued) if (heaviest === undefined || connection.bytes > heaviest.bytes) heaviest = connection;
    return heaviest;
  }
}
