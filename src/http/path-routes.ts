import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';
import { MethodNotAllowedError, NotFoundError } from '../errors.js';
import { assertAcceptable } from './content-negotiation.js';

/** Resolves to what to send (or to nothing, having sent it); a synchronous handler sends before it returns. */
export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | undefined;

const STANDARD_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type StandardMethod = (typeof STANDARD_METHODS)[number];

export interface PathOptions {
  /**
   * The media type the handlers produce (checked against Accept); `null`: the handlers' own, not
   * checked (file downloads answer with each file's type). @default JSON
   */
  produces?: string | null;
  /** Route config of every method of the path (e.g. exempt from rate limits). */
  config?: FastifyContextConfig;
  /** Quotas of each method besides the server-wide ones. */
  rateLimits?: Partial<Record<StandardMethod, readonly RateLimitPolicy[]>>;
}

const EXEMPT: FastifyContextConfig = Object.freeze({ rateLimitExempt: true });

/**
 * Registers one path's handlers, plus what every path answers: HEAD (with GET), OPTIONS with
 * `Allow` (and CORS preflight), and 405 with `Allow` for the other standard methods (RFC 9110, 15.5.6).
 */
export function registerPath(
  app: FastifyInstance,
  url: string,
  handlers: Partial<Record<StandardMethod, RouteHandler>>,
  options: PathOptions = {},
): void {
  const methods = STANDARD_METHODS.filter((m) => handlers[m] !== undefined);
  const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
  for (const method of methods) {
    const handler = handlers[method];
    if (handler === undefined) continue;
    // The Accept check runs in the handler: a route-level hook would cost every request more.
    const rateLimits = options.rateLimits?.[method];
    app.route({
      method,
      url,
      config: rateLimits === undefined ? { ...options.config } : { ...options.config, rateLimits },
      handler: (request, reply) => {
        request.routePattern = url;
        if (options.produces !== null) assertAcceptable(request, options.produces);
        return handler(request, reply);
      },
    });
  }
  app.route({
    method: 'OPTIONS',
    url,
    // CORS preflights are the browser's, not the client's: they are not counted.
    config: EXEMPT,
    handler: async (request, reply) => {
      app.corsPreflight?.(request, reply, allow);
      return reply.code(204).header('allow', allow).send();
    },
  });
  const others: string[] = [...STANDARD_METHODS.filter((m) => !methods.includes(m)), 'TRACE'];
  if (others.length > 0) {
    app.route({
      method: others,
      url,
      handler: () => Promise.reject(new MethodNotAllowedError(`This path takes ${allow}.`, { headers: { allow } })),
    });
  }
}

/** Ids are positive integers; anything else names no object, so it is a 404 like any unknown id. */
export function parseId(noun: string, text: string): number {
  // Decimal digits without a leading zero, at most 16 of them, read by hand (every item request does).
  const length = text.length;
  let id = 0;
  for (let i = 0; i < length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9 || (i === 0 && digit === 0) || i === 16) {
      id = 0;
      break;
    }
    id = id * 10 + digit;
  }
  if (id > 0 && Number.isSafeInteger(id)) return id;
  throw new NotFoundError(`There is no ${noun} with id ${text.slice(0, 40)}.`);
}
