import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../core/principal.js';
import { RateLimits, stateHeader, type PolicySet, type RateLimitResult } from '../core/rate-limits.js';
import { RateLimitedError } from '../errors.js';
import type { UploadBudget } from '../core/upload-budget.js';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Quotas of this route besides the server-wide ones (a resource operation's). */
    rateLimits?: readonly RateLimitPolicy[];
    /** Not counted as a request: health probes, CORS preflights, GraphQL operations (charged by cost instead). */
    rateLimitExempt?: boolean;
    /** A GraphQL operation route: charged its cost when a GraphQL budget is set, else counted as a request. */
    graphqlOperation?: boolean;
    /**
     * A route that upgrades to a WebSocket: an upgrade without a credential counts against the
     * bound on connection attempts per address, and the connection against its credential once
     * it names one (see {@link connectionRateLimiter}).
     */
    webSocket?: boolean;
  }
}

const NONE: readonly RateLimitPolicy[] = Object.freeze([]);

/**
 * The REST side of rate limiting: counts a request against its route's quotas, adds
 * `RateLimit-Policy` and `RateLimit` to the response, and refuses with 429 + `Retry-After` when a
 * quota is used up. Returns a promise only when the counters live outside this process.
 */
export function requestRateLimiter(limits: RateLimits): (request: FastifyRequest, reply: FastifyReply, principal: Principal) => Promise<void> | undefined {
  // Route config objects live as long as the app: the quota set of each is worked out once.
  const sets = new WeakMap<object, { known: PolicySet; anonymous: PolicySet }>();
  const graphqlCharged = limits.graphqlPolicy !== undefined;
  const limitsCredentials = limits.limitsCredentials;
  const upgrades = limits.webSocketUpgrades;
  return (request, reply, principal) => {
    // Only anonymous clients may be limited (the default anonymous quota alone): a request with a
    // credential pays nothing, not even the look-up of its route's settings.
    if (!limitsCredentials && principal.kind !== 'anonymous') return undefined;
    const config = request.routeOptions.config;
    // graphql-ws clients name their credential in connection_init, after the upgrade: an upgrade
    // without one counts against the bound on upgrades per address, not against the anonymous
    // quota (its connection counts against its credential later: connectionRateLimiter).
    if (config.webSocket === true && request.headers.authorization === undefined && isWebSocketUpgrade(request)) {
      if (upgrades.policies.length === 0) return undefined;
      const result = limits.limiter.consume(upgrades.policies, RateLimits.partition(principal, request.ip));
      if (result instanceof Promise) return result.then((r) => applyResult(reply, upgrades, r));
      applyResult(reply, upgrades, result);
      return undefined;
    }
    if (config.rateLimitExempt === true || (config.graphqlOperation === true && graphqlCharged)) return undefined;
    let routeSets = sets.get(config);
    if (routeSets === undefined) {
      routeSets = limits.requestPolicies(config.rateLimits ?? NONE);
      sets.set(config, routeSets);
    }
    const set = principal.kind === 'anonymous' ? routeSets.anonymous : routeSets.known;
    if (set.policies.length === 0) return undefined;
    const result = limits.limiter.consume(set.policies, RateLimits.partition(principal, request.ip));
    if (result instanceof Promise) return result.then((r) => applyResult(reply, set, r));
    applyResult(reply, set, result);
    return undefined;
  };
}

/**
 * Counts a WebSocket connection against the quotas of the credential connection_init named, when
 * its upgrade named none (the upgrade counted against the bound on upgrades per address instead).
 * Resolves when the connection may go on. @throws RateLimitedError when a quota is used up
 */
export function connectionRateLimiter(limits: RateLimits): (principal: Principal, clientAddress: string | undefined) => Promise<void> {
  return async (principal, clientAddress) => {
    const counted = limits.countConnection(principal, clientAddress);
    if (counted === undefined) return;
    const result = await counted.result;
    if (!result.allowed) throw refusal(result);
  };
}

/** The upload byte budget of a request's credential (its address's when anonymous), for the upload pipeline; undefined when uploads have none. */
export function uploadBudgetOf(limits: RateLimits | undefined, request: FastifyRequest): UploadBudget | undefined {
  return limits?.uploadBudget(request.principal, request.ip);
}

/**
 * Whether the request is a WebSocket handshake the HTTP server took as an upgrade (Node sets
 * `upgrade` on the requests it hands to the 'upgrade' event: `Connection: upgrade` and `Upgrade`
 * both present), not a plain request that only names an `Upgrade` header.
 */
function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return request.headers.upgrade !== undefined && (request.raw as { upgrade?: unknown }).upgrade === true;
}

function applyResult(reply: FastifyReply, set: PolicySet, result: RateLimitResult): void {
  reply.header('ratelimit-policy', set.header);
  reply.header('ratelimit', stateHeader(result.states));
  if (!result.allowed) throw refusal(result);
}

function refusal(result: RateLimitResult): RateLimitedError {
  const used = result.states.filter((s) => !s.allowed).map((s) => `"${s.policy.name}" (${s.policy.limit} per ${s.policy.windowSeconds} s)`);
  return new RateLimitedError(`The quota ${used.join(' and ')} is used up; try again in ${result.retryAfterSeconds} s.`, {
    headers: { 'retry-after': String(result.retryAfterSeconds) },
  });
}
