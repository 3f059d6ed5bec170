import type { ResourceModel, RestOperation } from '../schema/schema-model.js';
import type { PathOptions, StandardMethod } from '../http/path-routes.js';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';

/** The rate limits (docs/rate-limits.md) of a path's methods: each method counts as the resource operation `map` names. */
export function quotas(resourceModel: ResourceModel, map: Partial<Record<StandardMethod, RestOperation>>): PathOptions {
  const rateLimits: Partial<Record<StandardMethod, readonly RateLimitPolicy[]>> = {};
  for (const [method, operation] of Object.entries(map) as [StandardMethod, RestOperation][]) {
    const policy = resourceModel.rateLimits[operation];
    if (policy !== undefined) rateLimits[method] = [policy];
  }
  return { rateLimits };
}
