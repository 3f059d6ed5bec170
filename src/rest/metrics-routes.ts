import type { FastifyInstance } from 'fastify';
import { ADMIN_SCOPE, type Principal } from '../core/principal.js';
import { AuthenticationRequiredError, ForbiddenError } from '../errors.js';
import { registerPath } from '../http/path-routes.js';

/** The scope that lets a token read `/metrics` (besides `admin`): give the scraper this and nothing else. */
export const METRICS_SCOPE = 'metrics:read';

export interface MetricsRouteOptions {
  /** The metrics, sampled now, in the text format `contentType` names. */
  exposition: () => Promise<string>;
  contentType: string;
  /** Serve them without a credential. @default false */
  public: boolean;
}

/**
 * `GET /metrics`: Prometheus's text format. Operational data (routes, traffic, backlogs) is not
 * for everyone: unless configured public, it needs a token with the `metrics:read` or `admin`
 * scope, which Prometheus sends as `authorization: { credentials: <key> }` in its scrape config.
 */
export function registerMetricsRoute(app: FastifyInstance, options: MetricsRouteOptions): void {
  registerPath(
    app,
    '/metrics',
    {
      GET: async (request, reply) => {
        if (!options.public) requireMetricsScope(request.principal);
        const text = await options.exposition();
        return reply.type(options.contentType).header('cache-control', 'no-store').send(text);
      },
    },
    { produces: 'text/plain' },
  );
}

function requireMetricsScope(principal: Principal): void {
  if (principal.kind === 'anonymous') {
    throw new AuthenticationRequiredError(`Reading metrics needs a token with the ${METRICS_SCOPE} scope: send Authorization: Bearer <token>.`);
  }
  if (!principal.scopes.has(METRICS_SCOPE) && !principal.scopes.has(ADMIN_SCOPE)) {
    throw new ForbiddenError(`Reading metrics needs the ${METRICS_SCOPE} scope (or admin).`, [METRICS_SCOPE]);
  }
}
