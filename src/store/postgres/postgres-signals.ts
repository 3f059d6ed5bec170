import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { ChangeSignals } from '../sql-database.js';

/** How long to wait before reconnecting a listening connection that dropped. */
const RECONNECT_MS = 1000;

/**
 * Wake-ups between processes on one PostgreSQL database, over LISTEN/NOTIFY. A signal only says
 * "look again": what changed is always read from the database, so a signal lost (a connection
 * dropped, a process killed between its commit and its NOTIFY) only delays readers until their
 * next poll. Signals this process sent are not handed back to it.
 */
export class PostgresSignals implements ChangeSignals {
  readonly #pool: pg.Pool;
  readonly #connectionString: string;
  readonly #origin = randomUUID();
  /** Per channel: a NOTIFY in flight, and whether another is wanted after it. */
  readonly #sending = new Map<string, { again: boolean }>();
  readonly #listeners = new Map<string, Set<() => void>>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(pool: pg.Pool, connectionString: string) {
    this.#pool = pool;
    this.#connectionString = connectionString;
  }

  /** Sends a signal on `channel`; many in a row while one is being sent become one more. */
  announce(channel: string): void {
    const state = this.#sending.get(channel);
    if (state !== undefined) {
      state.again = true;
      return;
    }
    const sending = { again: false };
    this.#sending.set(channel, sending);
    const send = (): void => {
      this.#pool.query('select pg_notify($1, $2)', [channel, this.#origin]).then(
        () => {
          if (sending.again && !this.#closed) {
            sending.again = false;
            send();
          } else this.#sending.delete(channel);
        },
        // Readers poll as well: a signal that could not be sent only delays them.
        () => this.#sending.delete(channel),
      );
    };
    send();
  }

  /** Calls `onSignal` for every signal another process sends on `channel` (and after a reconnection). */
  async listen(channel: string, onSignal: () => void): Promise<void> {
    let listeners = this.#listeners.get(channel);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(onSignal);
    if (this.#client !== undefined) await this.#client.query(`listen ${quote(channel)}`);
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
      const client = new pg.Client({ connectionString: this.#connectionString });
      client.on('notification', (message) => {
        if (message.payload === this.#origin) return;
        for (const listener of this.#listeners.get(message.channel) ?? []) listener();
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
        for (const channel of this.#listeners.keys()) await client.query(`listen ${quote(channel)}`);
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

  #scheduleReconnect(): void {
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#connect().then(
        // Signals sent while disconnected are lost: wake everyone once to look again.
        () => {
          for (const listeners of this.#listeners.values()) for (const listener of listeners) listener();
        },
        () => this.#scheduleReconnect(),
      );
    }, RECONNECT_MS);
    this.#retry.unref();
  }
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
