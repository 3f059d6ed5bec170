import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ChangeSignals } from '../sql-database.js';
import { ClosingClient } from './closing-client.js';
import { RetryBackoff, type WorkerLog } from '../../retry-backoff.js';

/**
 * Reconnecting a listening connection that dropped: after 0.5 to 1 s, then backing off to at
 * most 10 s apart while the database stays away. Nothing is logged: readers poll meanwhile, and
 * the pool's own failures say the database is away.
 */
const RECONNECT_BACKOFF = { initialMs: 1000, maxMs: 10_000 };
const UNLOGGED: WorkerLog = { failing: () => undefined, recovered: () => undefined };
/** Least time between two NOTIFYs on a channel: what a wake-up may lag behind a commit. */
const SIGNAL_INTERVAL_MS = 5;

/**
 * Wake-ups between processes on one PostgreSQL database, over LISTEN/NOTIFY. A signal only says
 * "look again": what changed is always read from the database, so a signal lost (a connection
 * dropped while a signal was sent) only delays readers until their next poll. Signals this
 * process sent are not handed back to it.
 *
 * Channels are PostgreSQL's, shared by the whole database, while restgraph's tables live in the
 * connection's schema (its search_path): two deployments may share a database, one schema each.
 * So each channel is named after the schema too, and one deployment's writes never wake the other.
 */
export class PostgresSignals implements ChangeSignals {
  readonly #connectionString: string;
  readonly #connectTimeoutMs: number;
  readonly #origin = randomUUID();
  readonly #listeners = new Map<string, Set<() => void>>();
  /** Channels with a NOTIFY on its way, and whether another must follow it. */
  readonly #sending = new Map<string, { again: boolean }>();
  #client: pg.Client | undefined;
  /** The suffix that scopes channel names to the connection's schema (known once connected). */
  #scope = '';
  #connecting: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  readonly #reconnects = new RetryBackoff('reconnecting the LISTEN connection', UNLOGGED, RECONNECT_BACKOFF);
  #closed = false;

  /** `connectTimeoutMs`: how long opening the listening connection may take. */
  constructor(connectionString: string, connectTimeoutMs = 5000) {
    this.#connectionString = connectionString;
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /**
   * Tells the other processes to look at `channel` again, after a commit. Signals are coalesced:
   * one NOTIFY at a time, at most one every {@link SIGNAL_INTERVAL_MS}; calls meanwhile make one
   * more follow. So every commit is followed by a NOTIFY sent after it (within a few
   * milliseconds), and a busy instance sends a hundred a second, not one per write. (A NOTIFY
   * inside each write's transaction would serialise the commits on PostgreSQL's notification
   * queue lock.) Without the listening connection (reconnecting) nothing is sent: readers poll.
   */
  signal(channel: string): void {
    const state = this.#sending.get(channel);
    if (state !== undefined) {
      state.again = true;
      return;
    }
    const client = this.#client;
    if (client === undefined) return;
    const current = { again: false };
    this.#sending.set(channel, current);
    const done = (): void => {
      // The next one waits out the interval, gathering the commits made meanwhile.
      const timer = setTimeout(() => {
        this.#sending.delete(channel);
        if (current.again) this.signal(channel);
      }, SIGNAL_INTERVAL_MS);
      timer.unref();
    };
    client.query('select pg_notify($1, $2)', [this.#scoped(channel), this.#origin]).then(done, done);
  }

  /** Calls `onSignal` for every signal another process sends on `channel` (and after a reconnection). */
  async listen(channel: string, onSignal: () => void): Promise<void> {
    let listeners = this.#listeners.get(channel);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(onSignal);
    if (this.#client !== undefined) await this.#client.query(`listen ${quote(this.#scoped(channel))}`);
    else await this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#connecting?.catch(() => undefined);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  #connect(): Promise<void> {
    this.#connecting ??= (async () => {
      const client = new ClosingClient({ connectionString: this.#connectionString, connectionTimeoutMillis: this.#connectTimeoutMs, keepAlive: true });
      client.on('notification', (message) => {
        if (message.payload === this.#origin || !message.channel.endsWith(this.#scope)) return;
        for (const listener of this.#listeners.get(message.channel.slice(0, -this.#scope.length)) ?? []) listener();
      });
      const lost = (): void => {
        if (this.#client !== client) return;
        this.#client = undefined;
        client.end().catch(() => undefined);
        this.#scheduleReconnect();
      };
      client.on('error', lost);
      client.on('end', lost);
      try {
        await client.connect();
        const { rows } = await client.query<{ schema: string | null }>('select current_schema() as "schema"');
        this.#scope = `_${createHash('sha256')
          .update(rows[0]?.schema ?? '')
          .digest('hex')
          .slice(0, 16)}`;
        for (const channel of this.#listeners.keys()) await client.query(`listen ${quote(this.#scoped(channel))}`);
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      if (this.#closed) {
        await client.end();
        return;
      }
      this.#client = client;
    })().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** `channel` as named on the database: a short digest of the schema follows it (63 bytes at most). */
  #scoped(channel: string): string {
    return channel + this.#scope;
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#connect().then(
        // Signals sent while disconnected are lost: wake everyone once to look again.
        () => {
          this.#reconnects.succeeded();
          for (const listeners of this.#listeners.values()) for (const listener of listeners) listener();
        },
        () => this.#scheduleReconnect(),
      );
    }, this.#reconnects.failed(undefined));
    this.#retry.unref();
  }
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
