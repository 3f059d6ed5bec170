import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A 1×1 PNG, then `extra` random bytes after its end (still a PNG to a sniffer). */
export function png(extra = 0): Buffer {
  const tiny = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  return Buffer.concat([tiny, randomBytes(extra)]);
}

/** A part of a multipart/form-data body: a text field or a file. */
export type Part = { name: string; value: string } | { name: string; file: Buffer | string; filename: string; type?: string };

/** A multipart/form-data body and its Content-Type. */
export function form(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----restgraph${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`));
      chunks.push(Buffer.isBuffer(part.file) ? part.file : Buffer.from(part.file));
      chunks.push(Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** The keys of the files a local storage directory holds (its shards' files, not its temp folder), sorted; none when it does not exist. */
export function storedFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((shard) => shard !== 'tmp')
    .flatMap((shard) => readdirSync(join(dir, shard)))
    .sort();
}
