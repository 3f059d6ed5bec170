import type { FastifyReply, FastifyRequest } from 'fastify';
import { resourcesIn } from '../schema/version-view.js';
import type { SchemaModel } from '../schema/schema-model.js';

/** Adds a link to the response's `Link` header (RFC 8288), keeping those already there. */
export function addLink(reply: FastifyReply, link: string): void {
  const existing = reply.getHeader('link');
  reply.header('link', existing === undefined ? link : `${String(existing)}, ${link}`);
}

/**
 * The headers of a deprecated version's responses: `Deprecation` (RFC 9745, `@<epoch seconds>`),
 * `Sunset` (RFC 8594, an HTTP-date) when it has one, and a `Link` to the same resource in the next
 * version (`rel="successor-version"`, RFC 5829). Undefined for a version that is not deprecated.
 */
export function deprecationHeaders(schema: SchemaModel, version: string): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
  const info = schema.versionInfo.get(version);
  if (info?.deprecatedAt === undefined) return undefined;
  const deprecation = `@${Math.floor(info.deprecatedAt.getTime() / 1000)}`;
  const sunset = info.sunsetAt?.toUTCString();
  const successor = info.successor;
  const servedNext = new Set(successor === undefined ? [] : resourcesIn(schema, successor).map((r) => r.name));
  const prefix = `/${version}/`;
  return (request, reply) => {
    reply.header('deprecation', deprecation);
    if (sunset !== undefined) reply.header('sunset', sunset);
    if (successor === undefined) return;
    const path = (request.url.split('?', 1)[0] ?? '').slice(prefix.length);
    const resource = path.split('/', 1)[0] ?? '';
    // The same path in the next version, or its API description when it no longer has the resource.
    const target = servedNext.has(resource) ? `/${successor}/${path}` : `/${successor}/openapi.json`;
    addLink(reply, `<${target}>; rel="successor-version"`);
  };
}
