/**
 * How a background worker reports trouble: once when it starts failing (and again every
 * {@link REPEAT_REPORT_MS} while it goes on), and once when it works again.
 */
export interface WorkerLog {
  /** The work failed; it will be retried. */
  failing(error: unknown, message: string): void;
  /** The work succeeded again after failing for a while. */
  recovered(message: string): void;
}

export interface RetryBackoffOptions {
  /** Delay after the first failure (before jitter). @default 100 (ms) */
  initialMs?: number;
  /** Longest delay, however many failures. @default 5000 (ms) */
  maxMs?: number;
}

/** While failing goes on, how often it is reported again. */
const REPEAT_REPORT_MS = 60_000; // 1 min

/**
 * Bounded exponential backoff with jitter for a background worker (the event dispatcher, the
 * webhook feeder and sender): after each failure in a row the delay before the next attempt
 * doubles, from `initialMs` up to `maxMs`, and is drawn at random from its upper half, so that
 * instances that lost the database together do not all come back at the same moment. A success
 * resets it. Reports through a {@link WorkerLog}: the first failure of a run, then at most one a
 * minute, and the recovery, with how long the trouble lasted, so an outage is a few log lines, not
 * one per attempt.
 */
export class RetryBackoff {
  readonly #what: string;
  readonly #log: WorkerLog;
  readonly #initialMs: number;
  readonly #maxMs: number;
  #failures = 0;
  #retryAt = 0;
  #failingSince: number | undefined;
  #reportedAt = 0;

  /** `what` names the work in the log lines (`reading the event outbox`). */
  constructor(what: string, log: WorkerLog, options: RetryBackoffOptions = {}) {
    this.#what = what;
    this.#log = log;
    this.#initialMs = options.initialMs ?? 100;
    this.#maxMs = options.maxMs ?? 5000;
  }

  /** Whether the worker is failing (since its last success). */
  get failing(): boolean {
    return this.#failingSince !== undefined;
  }

  /** Whether the delay after the last failure is still running: no attempt should be made yet. */
  waiting(now = Date.now()): boolean {
    return now < this.#retryAt;
  }

  /** How long the delay after the last failure has still to run, in ms (0: an attempt may be made now). */
  remainingMs(now = Date.now()): number {
    return Math.max(0, this.#retryAt - now);
  }

  /** Records a failure; returns the delay before the next attempt, in ms. */
  failed(error: unknown, now = Date.now()): number {
    const ceiling = Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#failures, 30));
    this.#failures++;
    const delayMs = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.#retryAt = now + delayMs;
    if (this.#failingSince === undefined || now - this.#reportedAt >= REPEAT_REPORT_MS) {
      const since = this.#failingSince === undefined ? '' : ` (failing for ${Math.round((now - this.#failingSince) / 1000)} s)`;
      this.#log.failing(error, `${this.#what} failed${since}; retrying with backoff`);
      this.#reportedAt = now;
    }
    this.#failingSince ??= now;
    return delayMs;
  }

  /** Records a success: the next failure starts from the initial delay again. */
  succeeded(now = Date.now()): void {
    if (this.#failingSince === undefined) return;
    this.#log.recovered(`${this.#what} works again after failing for ${now - this.#failingSince} ms`);
    this.#failingSince = undefined;
    this.#failures = 0;
    this.#retryAt = 0;
  }
}
