import { LRUCache } from 'lru-cache';
import { ServiceUnavailableError, ValidationError } from '../errors.js';

/**
 * What keeps thumbnail rendering available to everyone (docs/files.md#thumbnails): a bound on each
 * render's time, a refusal of JPEGs built to be slow to decode, a memory of the renders that
 * failed (so a bad image costs one render, not one per request), and a bounded queue.
 */

/** The longest one render may run (sharp's own timeout, which stops libvips). */
export const RENDER_TIMEOUT_SECONDS = 10;
/** The most scans a JPEG may have to be rendered: a progressive JPEG has about 10; each scan is a pass over every block. */
export const MAX_JPEG_SCANS = 64;
/** Renders that may wait for a free place; more are refused with a 503. */
export const MAX_WAITING_RENDERS = 32;

/**
 * The number of scans (SOS markers) of a JPEG. Inside a scan's data a 0xFF byte is always followed
 * by 0x00 or a restart marker, so each 0xFF 0xDA is a scan header (or the bytes of a metadata
 * segment, which only overcounts).
 */
export function jpegScanCount(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(0xff); at !== -1 && at < bytes.length - 1; at = bytes.indexOf(0xff, at + 1)) {
    if (bytes[at + 1] === 0xda) count++;
  }
  return count;
}

/** Refuses (422) a JPEG with more than MAX_JPEG_SCANS scans before it is decoded. */
export function checkJpegScans(type: string, bytes: Buffer): void {
  if (type !== 'image/jpeg') return;
  const scans = jpegScanCount(bytes);
  if (scans > MAX_JPEG_SCANS) throw new ValidationError(`No thumbnail: the JPEG has ${scans} scans, more than the ${MAX_JPEG_SCANS} a thumbnail is rendered from.`);
}

/**
 * The renders that failed, by thumbnail key, and why: a later request for the same thumbnail is
 * answered the same refusal without rendering again. Bounded in bytes; a failure is forgotten
 * after an hour (the file itself never changes under its key).
 */
export class FailedRenders {
  readonly #failures = new LRUCache<string, string>({ maxSize: 256 * 1024, sizeCalculation: (detail, key) => 2 * (detail.length + key.length) + 64, ttl: 60 * 60 * 1000 });

  /** Throws the refusal remembered for `key`, if any. */
  check(key: string): void {
    const detail = this.#failures.get(key);
    if (detail !== undefined) throw new ValidationError(detail);
  }

  /** Remembers a render's refusal (a 422); other errors (storage, a full queue) are not the image's and are not kept. */
  remember(key: string, error: unknown): void {
    if (error instanceof ValidationError) this.#failures.set(key, error.message);
  }
}

/** The refusal of a render when MAX_WAITING_RENDERS already wait. */
export function rendersBusy(): ServiceUnavailableError {
  return new ServiceUnavailableError(`Too many thumbnails are being rendered; try again in a few seconds.`, { headers: { 'retry-after': '5' } });
}

/** The refusal of a render sharp stopped at RENDER_TIMEOUT_SECONDS. */
export function isRenderTimeout(error: unknown): boolean {
  return error instanceof Error && /^timeout/i.test(error.message);
}
