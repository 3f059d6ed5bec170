import SonicBoomModule from 'sonic-boom';

// sonic-boom is CommonJS: under ESM its class is the default export (its types also name it).
const SonicBoom = SonicBoomModule as unknown as typeof import('sonic-boom').SonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

/** Lines are written out once this much has gathered, or at the latest by the periodic flush. */
const BATCH_BYTES = 16 * 1024; // 16 KiB

/** A character outside ASCII (its UTF-8 form is not its Latin-1 form). */
export const NOT_ASCII = /[\u0080-\uffff]/;

/** Where log lines go: any line through `write`, lines known to be ASCII through `writeAscii` when the sink has it. */
export interface LineSink {
  write(line: string): unknown;
  writeAscii?(line: string): unknown;
}

/**
 * A pino destination that gathers lines in memory and writes them to a file descriptor in batches,
 * with synchronous writes (sonic-boom handles EAGAIN on pipes). A batch write per 16 KiB costs far
 * less per line than an asynchronous write per few lines. Call `flush()` periodically and at exit.
 *
 * Batches are encoded here, once, and handed to sonic-boom as bytes: given strings, it measures
 * and encodes each batch three times over. A batch of ASCII lines (every access line, see
 * access-log.ts, and most others) is copied out byte for byte (Latin-1, which is UTF-8 for
 * ASCII); one with any other character is encoded as UTF-8.
 */
export class BatchedLogDestination implements LineSink {
  readonly #out: SonicBoom;
  #pending = '';
  #ascii = true;

  constructor(fd = 1) {
    this.#out = new SonicBoom({ fd, sync: true, contentMode: 'buffer' });
  }

  /** Any line. */
  write(line: string): void {
    if (this.#ascii && NOT_ASCII.test(line)) this.#ascii = false;
    this.writeAscii(line);
  }

  /** A line the caller knows to be ASCII only. */
  writeAscii(line: string): void {
    this.#pending += line;
    if (this.#pending.length >= BATCH_BYTES) this.flushSync();
  }

  /** Writes out what has gathered. */
  flushSync(): void {
    if (this.#pending === '') return;
    const batch = Buffer.from(this.#pending, this.#ascii ? 'latin1' : 'utf8');
    this.#pending = '';
    this.#ascii = true;
    this.#out.write(batch as unknown as string); // contentMode 'buffer': sonic-boom takes Buffers
  }

  /** pino's flush hook. */
  flush(callback?: (error?: Error) => void): void {
    try {
      this.flushSync();
      callback?.();
    } catch (error) {
      callback?.(error as Error);
    }
  }
}
