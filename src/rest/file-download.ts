import type { FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, RangeNotSatisfiableError } from '../errors.js';
import type { FileStorage, StoredFileInfo } from '../core/file-storage.js';
import { keyOf, type FileValue } from '../core/file-fields.js';
import { noneMatch } from '../http/conditional-requests.js';
import { contentDisposition } from '../files/file-names.js';
import { DEFAULT_SEND_TIMEOUT_MS, sendDeadline } from './send-deadline.js';

/** Raster image types shown inline; everything else (SVG included, which can hold script) is an attachment. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp']);

/** How downloads are answered: streamed (no redirect), or a 302 to a presigned URL valid `redirectTtlSeconds` (docs/files.md#presigned-downloads). */
export interface DownloadOptions {
  redirectTtlSeconds?: number;
  /** A download whose client takes no bytes for this long is closed (files.sendTimeoutMs). @default DEFAULT_SEND_TIMEOUT_MS */
  sendTimeoutMs?: number;
}

/**
 * Sends one stored file (docs/files.md#download), or a thumbnail of one under its own `key`: its type, length, validators, one byte range,
 * and the headers that keep an uploaded HTML or SVG file from running as the API's origin. Called once access is decided; with
 * `redirectTtlSeconds` and a storage that has URLs, a redirect to the storage's short-lived URL instead. `stored`: what storage
 * already said of the file in this request (a kept thumbnail's), so it is not asked twice (with S3, a second HEAD).
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, storage: FileStorage, file: FileValue, key = keyOf(file) ?? '', options: DownloadOptions = {}, stored?: StoredFileInfo): Promise<FastifyReply> {
  const disposition = contentDisposition(INLINE_TYPES.has(file.type) ? 'inline' : 'attachment', file.name);
  if (options.redirectTtlSeconds !== undefined && storage.url !== undefined) {
    reply.header('etag', file.etag).header('cache-control', 'private, no-store').header('referrer-policy', 'no-referrer');
    if (!noneMatch(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
    const location = await storage.url(key, { expiresInSeconds: options.redirectTtlSeconds, type: file.type, disposition });
    return reply.code(302).header('location', location).send();
  }
  const info = stored ?? (await storage.stat(key));
  if (info === undefined) throw new NotFoundError('The file is not in storage.');
  reply.header('etag', file.etag);
  reply.header('last-modified', info.modified.toUTCString());
  reply.header('accept-ranges', 'bytes');
  reply.header('cache-control', 'private, no-cache');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', "sandbox; default-src 'none'");
  reply.header('content-disposition', disposition);
  if (!noneMatch(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  const range = wantedRange(request, file.etag, info.size);
  if (range === 'unsatisfiable') {
    throw new RangeNotSatisfiableError(`The file has ${info.size} bytes; the range ${String(request.headers.range)} starts past its end.`, { headers: { 'content-range': `bytes */${info.size}` } });
  }
  const stream = await storage.get(key, range);
  if (stream === undefined) throw new NotFoundError('The file is not in storage.');
  reply.type(file.type);
  sendDeadline(reply, stream, options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS);
  if (range === undefined) return reply.header('content-length', String(info.size)).send(stream);
  return reply
    .code(206)
    .header('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
    .header('content-length', String(range.end - range.start + 1))
    .send(stream);
}

/**
 * The one byte range a request asks for (RFC 9110, 14.2): undefined for the whole file (no
 * `Range`, an `If-Range` that no longer matches, several ranges, or a header this does not read);
 * `unsatisfiable` when it starts past the end.
 */
export function wantedRange(request: FastifyRequest, etag: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = request.headers.range;
  if (header === undefined) return undefined;
  const ifRange = request.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const match = /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim());
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined; // invalid: ignored, the whole file
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
