import { hash } from 'node:crypto';
import { PreconditionFailedError } from '../errors.js';

/**
 * Entity tags and preconditions (RFC 9110, sections 8.8.3 and 13). This tag is a hash of the exact
 * representation sent, so it is strong: it changes whenever any byte of the body would.
 */
export function entityTag(body: string): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}

/**
 * The strong entity tag of one stored row's representation, made without reading the body: the
 * shape of the representation (`shape`: its version's fields and their types, fixed at start-up),
 * the row's version (`updatedAt`: every write through restgraph moves it strictly forward, under
 * the row's lock, see core/later-than.ts) and the body's length. While rows change through
 * restgraph, two different representations at one URL never share a tag, and no body is hashed
 * (docs/performance.md, record ETags). Without a usable updatedAt (not a stored row, or one another
 * tool wrote with characters a tag cannot hold) the body is hashed instead.
 *
 * @example recordTag('Jd0aQw', '2026-11-24T10:00:00.000Z', body) // "Jd0aQw.2026-11-24T10:00:00.000Z.4b"
 */
export function recordTag(shape: string, updatedAt: unknown, body: string): string {
  return typeof updatedAt === 'string' && fitsTag(updatedAt) ? `"${shape}.${updatedAt}.${body.length.toString(36)}"` : entityTag(body);
}

/**
 * Whether an updatedAt may go into a tag as it is: 1 to 40 of RFC 9110's etagc (visible ASCII but
 * `"`). A loop, not a regular expression: this runs on every read, and the loop costs a tenth.
 */
function fitsTag(text: string): boolean {
  const length = text.length;
  if (length === 0 || length > 40) return false;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x22) return false;
  }
  return true;
}

/** A short name for the shape of a representation (its field names and types, in order). */
export function shapeTag(description: string): string {
  return hash('sha1', description, 'base64url').slice(0, 6);
}

/** If-None-Match uses the weak comparison: `W/"x"` matches `"x"`. `*` matches any current representation. */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return true;
  return !listMatches(header, tag, false);
}

/**
 * Throws 412 unless If-Match (strong comparison) names the current representation's tag.
 * Absent If-Match always passes; `*` passes for any existing row.
 */
export function assertIfMatch(header: string | undefined, currentTag: string): void {
  if (header === undefined) return;
  if (!listMatches(header, currentTag, true)) {
    throw new PreconditionFailedError('The resource has changed since you read it (If-Match does not match its current ETag). Read it again and retry.', {
      errors: [{ header: 'If-Match', detail: `the current ETag is ${currentTag}` }],
      headers: { etag: currentTag },
    });
  }
}

function listMatches(header: string, tag: string, strong: boolean): boolean {
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  for (const raw of trimmed.split(',')) {
    let candidate = raw.trim();
    if (candidate.startsWith('W/')) {
      if (strong) continue;
      candidate = candidate.slice(2);
    }
    if (candidate === tag) return true;
  }
  return false;
}
