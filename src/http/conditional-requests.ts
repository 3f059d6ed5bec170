import { hash } from 'node:crypto';
import { PreconditionFailedError } from '../errors.js';

/**
 * Entity tags and preconditions (RFC 9110, sections 8.8.3 and 13). The tag is a hash of the exact
 * representation sent, so it is strong: it changes whenever any byte of the body would.
 */
export function entityTag(body: string): string {
  return `"${hash('sha1', body, 'base64url')}"`;
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
