import type { FastifyReply } from 'fastify';

declare module 'fastify' {
  interface FastifyReply {
    /** Its response has been handed to ResponseBatches: whatever is sent after it is ignored. */
    sendHeld: boolean;
  }
}

/** What Fastify's onSend hook is given to let a response go on. */
export type SendContinuation = (error: null, payload: unknown) => void;

/** Told when a held response could not be written (Node refused its status line or headers). */
export type SendFailure = (reply: FastifyReply, error: unknown) => void;

/**
 * Sends the responses a busy server makes in one turn of the event loop together, at the end of
 * the turn (Fastify's onSend hook, released by setImmediate).
 *
 * A server that writes each response the moment it is ready makes its clients wake up once per
 * response: the client has read the previous one and gone back to waiting by the time the next
 * arrives. Waking a waiting process is work for the kernel of the sender, and on a virtual
 * machine one of the dearest operations there is (an interrupt between CPUs, through the
 * hypervisor). Sent together, a turn's responses find their clients awake after the first. On
 * loopback, under 32 connections, this took the server's time per simple read from 63 to 35 µs
 * (`perf record`, this repository's get-by-id benchmark): half of it had gone into waking the load
 * generator. The same holds for a reverse proxy on the same machine.
 *
 * Only a busy server holds responses: while the turns make one response each (a client at a time),
 * each is sent at once, since holding it would only delay it (by about a tenth, measured). Once a
 * turn has made more than one, the next turn's are held, until a turn makes one again.
 *
 * Nothing waits longer than its turn: a turn's other requests are handled first, and at most
 * `maxHeld` responses are held (the one that fills the batch sends it at once), so what a response
 * can wait is bounded by the time `maxHeld` requests take.
 *
 * A reply sends once: Fastify ignores a second send once the response has gone out, and with the
 * response held, this does the same (an async handler that sends and returns nothing makes
 * Fastify send again, with no payload).
 */
export class ResponseBatches {
  readonly #maxHeld: number;
  readonly #onFailure: SendFailure;
  #replies: FastifyReply[] = [];
  #payloads: unknown[] = [];
  #continuations: SendContinuation[] = [];
  /** Responses made in this turn, held or not. */
  #madeThisTurn = 0;
  /** Whether this turn's responses are held (the last turn made more than one). */
  #holding = false;
  readonly #endOfTurn = (): void => {
    this.#holding = this.#madeThisTurn > 1;
    this.#madeThisTurn = 0;
    this.release();
  };

  /**
   * @param maxHeld the most responses held at once
   * @param onFailure told of a response Node would not write (its reply may still take an answer written directly)
   */
  constructor(maxHeld: number, onFailure: SendFailure) {
    if (!Number.isSafeInteger(maxHeld) || maxHeld < 1) throw new RangeError(`maxHeld must be a positive integer, not ${maxHeld}`);
    this.#maxHeld = maxHeld;
    this.#onFailure = onFailure;
  }

  /** Fastify's onSend hook: sends the response, or holds it until the end of the turn (or sends the batch it fills). */
  hold(reply: FastifyReply, payload: unknown, next: SendContinuation): void {
    if (reply.sendHeld) return;
    reply.sendHeld = true;
    if (this.#madeThisTurn++ === 0) setImmediate(this.#endOfTurn);
    if (!this.#holding) {
      this.#send(reply, payload, next);
      return;
    }
    this.#replies.push(reply);
    this.#payloads.push(payload);
    this.#continuations.push(next);
    if (this.#replies.length >= this.#maxHeld) this.release();
  }

  /** How many responses are held now. */
  get held(): number {
    return this.#replies.length;
  }

  /** Whether responses made now are held (the server is busy). */
  get holding(): boolean {
    return this.#holding;
  }

  /** Sends every held response, in the order they were made. */
  release(): void {
    const replies = this.#replies;
    if (replies.length === 0) return;
    const payloads = this.#payloads;
    const continuations = this.#continuations;
    this.#replies = [];
    this.#payloads = [];
    this.#continuations = [];
    for (let i = 0; i < replies.length; i++) this.#send(replies[i] as FastifyReply, payloads[i], continuations[i] as SendContinuation);
  }

  #send(reply: FastifyReply, payload: unknown, next: SendContinuation): void {
    try {
      next(null, payload);
    } catch (error) {
      this.#onFailure(reply, error);
    }
  }
}
