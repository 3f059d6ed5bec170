import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface CorsOptions {
  /** Origins allowed to call the API from a browser: `*`, a list, or none. @default '*' */
  origins: '*' | readonly string[];
  /** How long browsers may cache a preflight answer. @default 600 (s) */
  maxAgeSeconds: number;
}

/** Headers a browser script may read from our responses. */
const EXPOSED = 'ETag, Location, Link, X-Total-Count, X-Request-Id, Idempotent-Replayed, Retry-After, RateLimit, RateLimit-Policy';
const ALLOWED_REQUEST_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Request-Id, Last-Event-ID';

/**
 * CORS (Fetch standard): bearer tokens travel in headers, not cookies, so credentials are never
 * allowed and `*` is a safe default. Returns what the app's onRequest hook calls for requests
 * that carry an Origin, or undefined when CORS is off.
 */
export function corsHeaders(options: CorsOptions | false): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
  if (options === false) return undefined;
  const { allowAll, allowed } = originPolicy(options);
  return (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (allowAll) {
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', EXPOSED);
      return;
    }
    if (allowed.has(origin)) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', EXPOSED);
    }
    reply.header('vary', 'Origin');
  };
}

/** Which origins may call: all, or the listed ones. Computed once per app. */
function originPolicy(options: CorsOptions): { allowAll: boolean; allowed: ReadonlySet<string> } {
  const allowAll = options.origins === '*';
  return { allowAll, allowed: new Set(allowAll ? [] : options.origins) };
}

/** Preflights are answered by each path's OPTIONS route, which knows the path's methods. */
export function registerCorsPreflight(app: FastifyInstance, options: CorsOptions | false): void {
  if (options === false) return;
  const { allowAll, allowed } = originPolicy(options);
  app.decorate('corsPreflight', (request: FastifyRequest, reply: FastifyReply, methods: string) => {
    const origin = request.headers.origin;
    if (origin === undefined || request.headers['access-control-request-method'] === undefined) return;
    if (!allowAll && !allowed.has(origin)) return;
    reply.header('access-control-allow-methods', methods);
    reply.header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? ALLOWED_REQUEST_HEADERS);
    reply.header('access-control-max-age', String(options.maxAgeSeconds));
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Adds the preflight response headers when `request` is a CORS preflight from an allowed origin. */
    corsPreflight?: (request: FastifyRequest, reply: FastifyReply, methods: string) => void;
  }
}
