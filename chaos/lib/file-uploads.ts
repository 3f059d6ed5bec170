import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { ScratchDatabase } from './scratch-database.js';
import { CHAOS_ADMIN_TOKEN } from './served-app.js';

/**
 * What the file scenarios share: a schema with a file field, uploads streamed from a generator
 * over a real socket, streamed downloads hashed as they arrive, and the files a local storage
 * directory holds (docs/files.md#storage), read from the disk directly.
 */

/** A resource `papers` with one file field of up to 2 GB, any type. */
export const FILE_SCHEMA = `
resources:
  papers:
    fields:
      name: { type: string }
      file: { type: file, maxSize: 2GB }
`;

export const ADMIN_HEADERS = { authorization: `Bearer ${CHAOS_ADMIN_TOKEN}` };

export interface UploadAnswer {
  status: number;
  body: string;
}

/**
 * PUTs the chunks `chunks` yields as `base`'s `path` (chunked transfer encoding, no
 * Content-Length: the server cannot know the size ahead), honouring backpressure, and reads the
 * answer. Rejects when the connection fails before an answer.
 */
export function streamUpload(base: string, path: string, chunks: AsyncIterable<Buffer>): Promise<UploadAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, method: 'PUT', path, agent: false, headers: { ...ADMIN_HEADERS, 'content-type': 'application/octet-stream' } }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (chunk: Buffer) => parts.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    void (async () => {
      try {
        for await (const chunk of chunks) {
          if (outgoing.destroyed) return;
          if (!outgoing.write(chunk)) await new Promise((r) => outgoing.once('drain', r));
        }
        outgoing.end();
      } catch (error) {
        outgoing.destroy(error as Error);
      }
    })();
  });
}

/** GETs `path` and hashes the body as it streams in: its status, SHA-256 and length. */
export function hashedDownload(base: string, path: string): Promise<{ status: number; sha256: string; bytes: number }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    request({ host: url.hostname, port: url.port, path, agent: false, headers: ADMIN_HEADERS }, (response) => {
      const hash = createHash('sha256');
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, sha256: hash.digest('hex'), bytes }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** The files of a local storage directory by key (size and path), tmp/ aside. */
export function storedFiles(dir: string): Map<string, { size: number; path: string }> {
  const files = new Map<string, { size: number; path: string }>();
  for (const shard of safeReaddir(dir)) {
    if (shard === 'tmp') continue;
    for (const name of safeReaddir(join(dir, shard))) {
      const path = join(dir, shard, name);
      files.set(name, { size: statSync(path).size, path });
    }
  }
  return files;
}

/** What `<dir>/tmp/` holds (uploads under way, or left by a crash). */
export function temporaryFiles(dir: string): string[] {
  return safeReaddir(join(dir, 'tmp'));
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A file value as the rows of `papers` hold it: the storage key is its etag's inside. */
export interface RowFile {
  id: number;
  key: string;
  size: number;
}

/** Every `papers` row's file (rows without one left out), read from the database directly. */
export async function rowFiles(db: ScratchDatabase): Promise<RowFile[]> {
  const rows = await db.query<{ id: number | string; file: unknown }>('select "id", "file" from "papers"');
  const files: RowFile[] = [];
  for (const row of rows) {
    if (row.file === null) continue;
    const value = (typeof row.file === 'string' ? JSON.parse(row.file) : row.file) as { etag: string; size: number };
    files.push({ id: Number(row.id), key: value.etag.replace(/"/g, ''), size: value.size });
  }
  return files;
}

/** `count` chunks of `size` bytes, each made by `make`, fed to `hash` as they go. */
export async function* chunksOf(count: number, size: number, hash: ReturnType<typeof createHash>, make: (n: number) => Buffer, pause?: () => Promise<void>): AsyncGenerator<Buffer> {
  for (let n = 0; n < count; n++) {
    const chunk = make(n).subarray(0, size);
    hash.update(chunk);
    yield chunk;
    if (pause !== undefined) await pause();
  }
}
