import SonicBoomModule from 'sonic-boom';

// sonic-boom is CommonJS: under ESM its class is the default export (its types also name it).
const SonicBoom = SonicBoomModule as unknown as typeof import('sonic-boom').SonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

/** Lines are written out once this much has gathered, or at the latest by the periodic flush. */
const BATCH_BYTES = 16 * 1024; // 16 KiB

/**
 * A pino destination that gathers lines in memory and writes them to a file descriptor in batches,
 * with synchronous writes (sonic-boom handles EAGAIN on pipes). A batch write per 16 KiB costs far
 * less per line than an asynchronous write per few lines. Call `flush()` periodically and at exit.
 */
export class BatchedLogDestination {
  readonly #out: SonicBoom;
  #pending = '';

  constructor(fd = 1) {
    this.#out = new SonicBoom({ fd, sync: true });
  }

  write(line: string): void {
    this.#pending += line;
    if (this.#pending.length >= BATCH_BYTES) this.flushSync();
  }

  /** Writes out what has gathered. */
  flushSync(): void {
    if (this.#pending === '') return;
    const batch = this.#pending;
    this.#pending = '';
    this.#out.write(batch);
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
