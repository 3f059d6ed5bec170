import { randomBytes } from 'node:crypto';

/** A 1×1 PNG, then `extra` random bytes after its end (still a PNG to a sniffer). */
export function png(extra = 0): Buffer {
  const tiny = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  return Buffer.concat([tiny, randomBytes(extra)]);
}
