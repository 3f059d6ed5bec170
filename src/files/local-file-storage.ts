import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import type { FileStorage, StoredFileInfo } from '../core/file-storage.js';
import { isFileKey, isStorageKey } from '../core/file-fields.js';
import { ByteLimit } from './byte-limit.js';

/**
 * File storage in a local directory (docs/files.md#storage): `<dir>/<first two characters of the
 * key>/<key>`, written to `<dir>/tmp/` first, flushed, then renamed into place, so a file is
 * complete or absent even after a crash. Keys are checked against the key form before any path
 * is built from them.
 */
export class LocalFileStorage implements FileStorage {
  readonly #dir: string;
  readonly #fsync: boolean;
  /** Shards known to exist (at most 64² of them). */
  readonly #shards = new Set<string>();
  readonly description: string;

  constructor(dir: string, options: { fsync?: boolean } = {}) {
    this.#dir = dir;
    this.#fsync = options.fsync ?? true;
    this.description = `the directory ${dir}`;
  }

  /**
   * Creates the directory (and its tmp/) and clears temporary files a crash left behind, unless
   * `keepTemporary` (a command writing into a storage a running server may be uploading into).
   */
  async open(options: { keepTemporary?: boolean } = {}): Promise<void> {
    if (options.keepTemporary !== true) await rm(join(this.#dir, 'tmp'), { recursive: true, force: true });
    await mkdir(join(this.#dir, 'tmp'), { recursive: true });
  }

  async put(key: string, body: Readable, options: { maxBytes: number; tooLarge: () => Error }): Promise<{ size: number }> {
    const path = this.#path(key);
    const temporary = join(this.#dir, 'tmp', `${key}.${randomBytes(6).toString('hex')}`);
    const counter = new ByteLimit(options.maxBytes, options.tooLarge);
    // Flushed (fsync) by the stream on its own descriptor before it closes: not closed, reopened to fsync, closed again.
    const file = createWriteStream(temporary, { flags: 'wx', flush: this.#fsync });
    try {
      await pipeline(body, counter, file);
      await this.#renameIntoShard(temporary, path);
      if (this.#fsync) await syncPath(join(path, '..'), 'r');
      return { size: counter.bytes };
    } catch (error) {
      // The pipeline can fail (the size limit at the first chunk) before the file's open has come
      // back: unlinked then, the open would make the file after, and it would stay in tmp/.
      if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }

  /** Renames into the key's shard, made first when it is missing (one mkdir per shard, not per file). */
  async #renameIntoShard(temporary: string, path: string): Promise<void> {
    const shard = join(path, '..');
    if (!this.#shards.has(shard)) {
      await mkdir(shard, { recursive: true });
      this.#shards.add(shard);
    }
    try {
      await rename(temporary, path);
    } catch (error) {
      if (!isMissing(error)) throw error;
      // The shard was removed since (by hand): made again.
      await mkdir(shard, { recursive: true });
      await rename(temporary, path);
    }
  }

  async stat(key: string): Promise<StoredFileInfo | undefined> {
    if (!isStorageKey(key)) return undefined;
    try {
      const info = await stat(this.#path(key));
      return { size: info.size, modified: info.mtime };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable | undefined> {
    if (!isStorageKey(key)) return undefined;
    const stream = createReadStream(this.#path(key), range === undefined ? {} : { start: range.start, end: range.end });
    // Opened before answering: a missing file is undefined, not a stream that fails later.
    return new Promise((resolve, reject) => {
      stream.once('open', () => resolve(stream));
      stream.once('error', (error) => (isMissing(error) ? resolve(undefined) : reject(error)));
    });
  }

  async delete(key: string): Promise<void> {
    if (!isStorageKey(key)) return;
    if (isFileKey(key)) {
      // Its derived files (thumbnails) first: they sit beside it, named `<key>.<variant>`.
      const shard = join(this.#dir, key.slice(0, 2));
      for (const name of await readdir(shard).catch(() => [] as string[])) {
        if (name.startsWith(`${key}.`) && isStorageKey(name)) await unlinkIfThere(join(shard, name));
      }
    }
    await unlinkIfThere(this.#path(key));
  }

  async *list(): AsyncIterable<{ key: string; modified: Date }> {
    for (const shard of await readdir(this.#dir).catch(() => [] as string[])) {
      if (shard === 'tmp' || shard.length !== 2) continue;
      const names = await readdir(join(this.#dir, shard)).catch(() => [] as string[]);
      const files = new Set(names.filter(isFileKey));
      for (const name of names) {
        // A derived file is listed only when its file is gone (a thumbnail rendered while its file was deleted).
        if (!isFileKey(name) && !(isStorageKey(name) && !files.has(name.slice(0, name.indexOf('.'))))) continue;
        const info = await stat(join(this.#dir, shard, name)).catch(() => undefined);
        if (info !== undefined) yield { key: name, modified: info.mtime };
      }
    }
  }

  #path(key: string): string {
    if (!isStorageKey(key)) throw new Error(`not a file key: ${key}`);
    return join(this.#dir, key.slice(0, 2), key);
  }
}

async function syncPath(path: string, flags: string): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes a file, already gone being fine: one unlink (rm with force would lstat it first). */
async function unlinkIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR');
}
