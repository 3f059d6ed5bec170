import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../errors.js';
import { entityTag, noneMatch } from './conditional-requests.js';

/**
 * The browser pages restgraph serves (GraphiQL at /graphql, the API reference at /docs) load
 * scripts and styles from this server only and talk to this server only.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'";

/**
 * A stricter policy for pages built here that need no inline styles (the admin console): styles
 * from this server's files only, no forms posted anywhere, no framing, no `<base>`.
 */
export const STRICT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A browser page: HTML under the pages' Content-Security-Policy (or `csp`), revalidated on every load. */
export function sendBrowserPage(reply: FastifyReply, html: string, csp: string = CSP): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .send(html);
}

const require = createRequire(import.meta.url);

/** A file of an installed package (whatever its "exports" allow importing). */
export function packageFile(name: string, file: string): string {
  return join(dirname(require.resolve(`${name}/package.json`)), file);
}

/** Where an asset comes from: a file (of an installed package), or text or bytes made here. */
export type AssetSource = { type: string; path: string } | { type: string; text: string } | { type: string; bytes: Buffer };

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/**
 * The assets of a browser page, by file name: read once, on first use, and answered with a strong
 * ETag and a day's caching (304 on If-None-Match), whatever Accept says (browsers ask for styles
 * as text/css). Only the names given exist: no path from a request reaches the file system.
 */
export class BrowserAssets {
  readonly #sources: ReadonlyMap<string, AssetSource>;
  readonly #loaded = new Map<string, Asset>();
  readonly #notFound: string;

  /** `notFound` is the detail of the 404 for an unknown asset. */
  constructor(sources: Record<string, AssetSource>, notFound: string) {
    this.#sources = new Map(Object.entries(sources));
    this.#notFound = notFound;
  }

  send(request: FastifyRequest, reply: FastifyReply, file: string): FastifyReply {
    const asset = this.#get(file);
    if (asset === undefined) throw new NotFoundError(this.#notFound);
    reply.header('etag', asset.etag).header('cache-control', 'public, max-age=86400');
    if (!noneMatch(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  }

  #get(file: string): Asset | undefined {
    let asset = this.#loaded.get(file);
    if (asset !== undefined) return asset;
    const source = this.#sources.get(file);
    if (source === undefined) return undefined;
    const body = 'text' in source ? Buffer.from(source.text) : 'bytes' in source ? source.bytes : readFileSync(source.path);
    asset = { body, type: source.type, etag: entityTag(body.toString('latin1')) };
    this.#loaded.set(file, asset);
    return asset;
  }
}
