/**
 * File names as clients give them, made safe to store and to send back (docs/files.md#upload):
 * the last path component, without control characters, NUL or bidirectional overrides, at most
 * 255 bytes of UTF-8 with the extension kept.
 */

const MAX_NAME_BYTES = 255;
/** C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

export function sanitizeFileName(raw: string): string {
  const last = raw.split(/[/\\]/).pop() ?? '';
  const clean = last.normalize('NFC').replace(UNSAFE, '').trim().replace(/^[.\s]+/, '');
  const name = truncateKeepingExtension(clean);
  return name === '' ? 'file' : name;
}

function truncateKeepingExtension(name: string): string {
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  // One pass over the characters: cut on a character, never inside one.
  let budget = MAX_NAME_BYTES - Buffer.byteLength(extension);
  let stem = '';
  for (const character of name.slice(0, name.length - extension.length)) {
    budget -= Buffer.byteLength(character);
    if (budget < 0) break;
    stem += character;
  }
  return stem + extension;
}

/** The file name of a `Content-Disposition` header: `filename*` (RFC 8187, UTF-8) before `filename`. */
export function dispositionFileName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)'[^']*'([^;]+)/.exec(header);
  if (extended?.[1] !== undefined) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // a malformed percent-encoding: fall back to the plain parameter
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/.exec(header);
  if (quoted?.[1] !== undefined) return quoted[1].replace(/\\(.)/g, '$1');
  const token = /filename\s*=\s*([^;\s]+)/.exec(header);
  return token?.[1];
}

/** A `Content-Disposition` value for a download: `inline` or `attachment`, with the name in ASCII and in UTF-8 (RFC 6266). */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
