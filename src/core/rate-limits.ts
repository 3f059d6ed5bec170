import ipaddr from 'ipaddr.js';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';
import type { Principal } from './principal.js';
import type { CounterStore } from '../store/rate-limit-counters.js';
import { UploadBudget } from './upload-budget.js';

/**
 * Rate limits: fixed windows aligned to the clock (a 60 s window runs from one whole minute to
 * the next), so every instance sharing a counter store counts the same window under the same key,
 * and a window's reset time is known without asking the store.
 */

/** Where one policy stands for one partition after a request was counted (or refused). */
export interface PolicyState {
  readonly policy: RateLimitPolicy;
  /** Units left in the window. */
  readonly remaining: number;
  /** Whole seconds until the window ends (at least 1). */
  readonly resetSeconds: number;
  /** False when the units did not fit: the request is refused and nothing was counted. */
  readonly allowed: boolean;
}

export interface RateLimitResult {
  readonly allowed: boolean;
  readonly states: readonly PolicyState[];
  /** Seconds until every refusing policy's window has ended (the Retry-After). */
  readonly retryAfterSeconds: number;
}

/**
 * Counts requests (or cost points) against policies in a {@link CounterStore}. With the in-memory
 * store everything happens synchronously, so the request path pays no promise for it.
 */
export class RateLimiter {
  readonly #store: CounterStore;
  readonly #now: () => number;

  constructor(store: CounterStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /**
   * Takes `units` from every policy for `partition` (a credential id or a client address). When any
   * policy lacks them the request is refused; policies that had room still count it, as a request
   * that was refused elsewhere still reached the server.
   */
  consume(policies: readonly RateLimitPolicy[], partition: string, units = 1): RateLimitResult | Promise<RateLimitResult> {
    const now = this.#now();
    const pending: Promise<PolicyState>[] = [];
    const states: PolicyState[] = [];
    for (const policy of policies) {
      const windowMs = policy.windowSeconds * 1000;
      const windowStart = Math.floor(now / windowMs) * windowMs;
      const key = `${policy.name}|${partition}|${windowStart}`;
      const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
      const counted = this.#store.add(key, units, policy.limit, windowStart + windowMs);
      if (counted instanceof Promise) pending.push(counted.then((c) => stateOf(policy, c, resetSeconds)));
      else states.push(stateOf(policy, counted, resetSeconds));
    }
    if (pending.length === 0) return summarise(states);
    return Promise.all(pending).then((more) => summarise([...states, ...more]));
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}

function stateOf(policy: RateLimitPolicy, counted: { used: number; added: boolean }, resetSeconds: number): PolicyState {
  return { policy, remaining: Math.max(0, policy.limit - counted.used), resetSeconds, allowed: counted.added };
}

function summarise(states: PolicyState[]): RateLimitResult {
  let allowed = true;
  let retryAfterSeconds = 0;
  for (const state of states) {
    if (state.allowed) continue;
    allowed = false;
    retryAfterSeconds = Math.max(retryAfterSeconds, state.resetSeconds);
  }
  return { allowed, states, retryAfterSeconds };
}

/** `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers): `"default";q=100;w=60, …`. */
export function policyHeader(policies: readonly RateLimitPolicy[]): string {
  return policies.map((p) => `"${p.name}";q=${p.limit};w=${p.windowSeconds}`).join(', ');
}

/** `RateLimit`: `"default";r=42;t=17, …`, one item per policy. */
export function stateHeader(states: readonly PolicyState[]): string {
  let out = '';
  for (const s of states) out += `${out === '' ? '' : ', '}"${s.policy.name}";r=${s.remaining};t=${s.resetSeconds}`;
  return out;
}

/** The server-wide quotas in force (from the environment, else the schema file). */
export interface RateLimitSettings {
  /** Requests per window per credential; per address for anonymous requests unless `anonymous` is set. */
  default?: RateLimitPolicy | undefined;
  /** Requests per window per address without a credential; null: none at all (not even `default`). */
  anonymous?: RateLimitPolicy | null | undefined;
  /** GraphQL cost points per window per credential (per address when anonymous). */
  graphql?: RateLimitPolicy | undefined;
  /** Whether any resource operation has a quota of its own (so credentials may be limited without `default`). */
  resourceQuotas?: boolean | undefined;
  /**
   * WebSocket upgrades per window per address that name no credential (graphql-ws clients name
   * theirs in connection_init, after the upgrade); null or undefined: none.
   */
  webSocketConnections?: RateLimitPolicy | null | undefined;
  /** Bytes of uploaded files per window per credential (per address when anonymous); null or undefined: none. */
  uploadBytes?: RateLimitPolicy | null | undefined;
}

/** The quota set that applies to one kind of request, with its `RateLimit-Policy` text made once. */
export interface PolicySet {
  readonly policies: readonly RateLimitPolicy[];
  readonly header: string;
}

const EMPTY: PolicySet = Object.freeze({ policies: Object.freeze([]), header: '' });

/**
 * Which quotas a request counts against and under which partition: its credential, or its
 * client address when it has none. Adapters (REST hook, GraphQL) ask; the limiter counts.
 */
export class RateLimits {
  readonly limiter: RateLimiter;
  readonly #settings: RateLimitSettings;
  /** The bound on WebSocket upgrades without a credential, per address; empty when there is none. */
  readonly webSocketUpgrades: PolicySet;
  /** The request quotas a WebSocket connection counts against once connection_init names its credential. */
  readonly #connections: { known: PolicySet; anonymous: PolicySet };

  constructor(limiter: RateLimiter, settings: RateLimitSettings) {
    this.limiter = limiter;
    this.#settings = settings;
    this.webSocketUpgrades = policySet(settings.webSocketConnections ?? undefined, []);
    this.#connections = this.requestPolicies([]);
  }

  /**
   * Whether a request with a credential can count against any request quota: when not, adapters
   * skip counting it altogether (anonymous clients may be limited alone, by the default quota).
   */
  get limitsCredentials(): boolean {
    return this.#settings.default !== undefined || this.#settings.resourceQuotas === true;
  }

  get graphqlPolicy(): RateLimitPolicy | undefined {
    return this.#settings.graphql;
  }

  /** Whose counter a request counts against: its credential's, or its client network's when anonymous. */
  static partition(principal: Principal, clientAddress: string | undefined): string {
    return principal.kind === 'anonymous' ? `ip:${clientNetwork(clientAddress)}` : `cred:${principal.credentialId}`;
  }

  /**
   * The request quotas of a route with these extra (resource) quotas, for known and anonymous
   * clients. Adapters work them out once per route, not per request.
   */
  requestPolicies(extra: readonly RateLimitPolicy[]): { known: PolicySet; anonymous: PolicySet } {
    const { default: base, anonymous } = this.#settings;
    return { known: policySet(base, extra), anonymous: policySet(anonymous === null ? undefined : (anonymous ?? base), extra) };
  }

  /**
   * Counts a WebSocket connection whose upgrade named no credential (it counted against
   * {@link webSocketUpgrades} instead) once connection_init has named one, as a request of that
   * credential (anonymous: of its address) on /graphql: against the request quotas, unless GraphQL
   * has a budget (operations are charged their cost then, and nothing counts the connection).
   * Undefined when no quota applies.
   */
  countConnection(principal: Principal, clientAddress: string | undefined): { set: PolicySet; result: RateLimitResult | Promise<RateLimitResult> } | undefined {
    if (this.#settings.graphql !== undefined || (principal.kind !== 'anonymous' && !this.limitsCredentials)) return undefined;
    const set = principal.kind === 'anonymous' ? this.#connections.anonymous : this.#connections.known;
    if (set.policies.length === 0) return undefined;
    return { set, result: this.limiter.consume(set.policies, RateLimits.partition(principal, clientAddress)) };
  }

  /**
   * The upload byte budget of a request (or GraphQL operation) by this principal from this address,
   * for the upload pipeline to count its files' bytes against; undefined when uploads have none.
   */
  uploadBudget(principal: Principal, clientAddress: string | undefined): UploadBudget | undefined {
    const policy = this.#settings.uploadBytes;
    if (policy === undefined || policy === null) return undefined;
    return new UploadBudget(this.limiter, policy, RateLimits.partition(principal, clientAddress));
  }

  /** Charges a GraphQL operation its cost; undefined when GraphQL has no budget. */
  chargeGraphql(principal: Principal, clientAddress: string | undefined, cost: number): RateLimitResult | Promise<RateLimitResult> | undefined {
    const policy = this.#settings.graphql;
    if (policy === undefined) return undefined;
    return this.limiter.consume([policy], RateLimits.partition(principal, clientAddress), cost);
  }
}

function policySet(base: RateLimitPolicy | undefined, extra: readonly RateLimitPolicy[]): PolicySet {
  const policies = base === undefined ? extra : [base, ...extra];
  if (policies.length === 0) return EMPTY;
  return Object.freeze({ policies: Object.freeze([...policies]), header: policyHeader(policies) });
}

/**
 * The network an anonymous client is counted by: its IPv4 address (an IPv4-mapped IPv6 address is
 * that IPv4 address), or the /64 of its IPv6 address. A host usually gets a whole /64 and may use
 * any address in it, so counting IPv6 clients per address would give each 2^64 quotas.
 */
export function clientNetwork(address: string | undefined): string {
  if (address === undefined || !address.includes(':')) return address ?? 'unknown';
  let parsed: ipaddr.IPv6;
  try {
    parsed = ipaddr.IPv6.parse(address);
  } catch {
    return address;
  }
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${parsed.parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}
