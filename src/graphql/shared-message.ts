import type { ExecutionResult } from 'graphql';

/**
 * One result of a subscription group's execution, made once for every member: the formatted result
 * (what clients get, error codes included), its JSON text and that text's UTF-8 bytes, each made on
 * first use. A transport writes the same bytes to every member's connection, with only its own
 * envelope around them (graphql-ws: the operation id), so an event costs one serialisation and one
 * encoding whatever the number of members.
 */
export class SharedMessage {
  readonly result: ExecutionResult;
  #text: string | undefined;
  #bytes: Buffer | undefined;
  /**
   * The last message of the members it goes to (the slow-consumer error that ends them): never
   * counted against the queue bounds, since it is what ends a queue.
   */
  readonly final: boolean;
  /** Member queues holding it now (see QueuedBytes: the server counts it once while any does). */
  holders = 0;

  constructor(result: ExecutionResult, final = false) {
    this.result = result;
    this.final = final;
  }

  /** The result as JSON. */
  get text(): string {
    return (this.#text ??= JSON.stringify(this.result));
  }

  /** The JSON text in UTF-8, as written to the network. */
  get bytes(): Buffer {
    return (this.#bytes ??= Buffer.from(this.text, 'utf8'));
  }

  /** The size of those bytes. */
  get size(): number {
    return this.bytes.length;
  }
}
