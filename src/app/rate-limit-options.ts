/** The settings of the quotas: server-wide, anonymous, WebSocket upgrades and the account throttles (re-exported by app-options.ts). */

/** Server-wide quotas (`"<count>/<window>"`, like `100/1m`) and where their counters live. */
export interface RateLimitOptions {
  /** Requests per window per credential (per client address when anonymous). @default the schema's, else none */
  default: string | undefined;
  /**
   * Requests per window per client address (an IPv6 client: per /64) without a credential, or
   * `off` for none. @default the schema's, else `default`, else {@link DEFAULT_ANONYMOUS_RATE_LIMIT}
   */
  anonymous: string | undefined;
  /** GraphQL cost points per window per credential. @default the schema's, else none */
  graphql: string | undefined;
  /**
   * WebSocket upgrades per window per client address (an IPv6 client: per /64) that name no
   * credential, or `off` for no bound. graphql-ws clients name theirs in connection_init, after the
   * upgrade: each connection then counts against that credential's quotas (an anonymous one against
   * `anonymous`), and this bound keeps floods of upgrades that never authenticate in check.
   * @default {@link DEFAULT_WEBSOCKET_CONNECTIONS_RATE_LIMIT}
   */
  webSocketConnections: string | undefined;
  /**
   * Bytes of uploaded files per window per credential (per client address when anonymous), as
   * `"<size>/<window>"` (`10GB/1h`), or `off` for none; counted while the files stream, on every
   * upload path (`RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES`). Only schemas with file fields have it.
   * @default {@link DEFAULT_UPLOAD_BYTES_RATE_LIMIT}
   */
  uploadBytes: string | undefined;
  /**
   * Where counters live: `memory` (this process), `database` (the shared SQL database) or `redis`
   * (`redisUrl`). @default redis with a redisUrl, database on PostgreSQL, memory on SQLite
   */
  store: 'memory' | 'database' | 'redis' | undefined;
  /** Redis for shared counters (`REDIS_URL`). @default none */
  redisUrl: string | undefined;
  /** Failed sign-ins per identifier (`RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES`). @default {@link DEFAULT_ACCOUNT_RATE_LIMITS} */
  signInFailures: string | undefined;
  /** Account requests per client address (`RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS`). @default {@link DEFAULT_ACCOUNT_RATE_LIMITS} */
  accountRequests: string | undefined;
  /** Account emails per identifier (`RESTGRAPH_RATE_LIMIT_ACCOUNT_EMAILS`). @default {@link DEFAULT_ACCOUNT_RATE_LIMITS} */
  accountEmails: string | undefined;
}

/**
 * The throttles of the account endpoints, apart from every other quota: 10 failed sign-ins per
 * identifier per 15 minutes (a password guesser gets 960 tries a day at most, a user who forgot
 * theirs waits a quarter of an hour), 100 account requests per client address per minute (a
 * shared office address signs in comfortably; a script does not), 5 emails per identifier per
 * hour (no mailbox is flooded through the server).
 */
export const DEFAULT_ACCOUNT_RATE_LIMITS = Object.freeze({ signInFailures: '10/15m', accountRequests: '100/1m', accountEmails: '5/1h' });

/**
 * The quota of anonymous clients when nothing else sets one: 600 requests a minute per address
 * (10 a second on average, in bursts as the client likes). A browser app's busiest pattern (a
 * page's dozens of requests at load, then a poll every second or two) fits several times over,
 * and so do a dozen such users behind one NAT; one client looping gets 10 requests a second, so a
 * fresh server is no open amplifier. `RESTGRAPH_RATE_LIMIT_ANONYMOUS=off` removes it.
 */
export const DEFAULT_ANONYMOUS_RATE_LIMIT = '600/1m';

/** The value of `anonymous` (RESTGRAPH_RATE_LIMIT_ANONYMOUS) that turns the anonymous quota off. */
export const ANONYMOUS_RATE_LIMIT_OFF = 'off';

/**
 * The bound on WebSocket upgrades without a credential per address when nothing else sets one:
 * 12,000 a minute (200 a second on average). Ten thousand graphql-ws clients behind one address (an
 * office, a NAT, a load test) connect within a minute; an upgrade that never authenticates costs a
 * handshake and lives at most 3 s (graphql-ws's wait for connection_init), so a flood from one
 * address holds at most some hundreds of sockets. `RESTGRAPH_RATE_LIMIT_WEBSOCKET_CONNECTIONS=off`
 * removes it.
 */
export const DEFAULT_WEBSOCKET_CONNECTIONS_RATE_LIMIT = '12000/1m';

/**
 * The upload byte budget per credential (per address when anonymous) when nothing else sets one:
 * 10 GiB an hour, about 3 MB/s sustained. A person uploading photos or documents, or an import of
 * a few thousand files, stays far below it; one key (or one address) cannot fill a disk at the
 * network's speed, and learns so with a 429. `RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES=off` removes it.
 */
export const DEFAULT_UPLOAD_BYTES_RATE_LIMIT = '10GB/1h';
