import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFileStorage } from '../src/files/local-file-storage.js';
import { derivedKey } from '../src/core/file-fields.js';
import { tempDir } from './helpers/test-app.js';

/**
 * The local storage's writes (docs/files.md#storage) on a real directory: the file at
 * `<dir>/<k[0..2]>/<key>`, nothing left in tmp/, a shard removed by hand made again, a deletion
 * taking the derived files with it. No database: the storage alone.
 */

const KEY_A = 'AAaaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'AAbbbbbbbbbbbbbbbbbbbb';
const limits = { maxBytes: 1024 * 1024, tooLarge: () => new Error('too large') };

describe('local file storage', () => {
  let dir: { path: string; cleanup: () => void };
  let storage: LocalFileStorage;
  beforeEach(async () => {
    dir = tempDir('restgraph-local-storage-');
    storage = new LocalFileStorage(dir.path);
    await storage.open();
  });
  afterEach(() => dir.cleanup());

  it('leaves nothing in tmp/ when the size limit stops a write before its temporary file was open', async () => {
    // The limit fails at the first chunk, often before the temporary file's open has come back.
    const tooSmall = { maxBytes: 1, tooLarge: () => new Error('too large') };
    for (let i = 0; i < 1000; i++) {
      await expect(storage.put(KEY_A, Readable.from([Buffer.alloc(10)]), tooSmall)).rejects.toThrow('too large');
    }
    // A whole write after them, flushed: the opens of the failed ones have come back by its end.
    await storage.put(KEY_B, Readable.from([Buffer.from('after')]), limits);
    // Before: a failed write unlinked its temporary file before the open had made it (a few in a thousand stayed).
    expect(readdirSync(join(dir.path, 'tmp'))).toEqual([]);
    expect(existsSync(join(dir.path, 'AA', KEY_A))).toBe(false);
  });

  it('stores the bytes under the key in its shard, leaving nothing in tmp/', async () => {
    const bytes = randomBytes(300 * 1024);
    await expect(storage.put(KEY_A, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), limits)).resolves.toEqual({ size: bytes.length });
    expect(readFileSync(join(dir.path, 'AA', KEY_A)).equals(bytes)).toBe(true);
    expect(readdirSync(join(dir.path, 'tmp'))).toEqual([]);
  });

  it('makes a shard again when it was removed after a file was stored in it', async () => {
    await storage.put(KEY_A, Readable.from([Buffer.from('first')]), limits);
    rmSync(join(dir.path, 'AA'), { recursive: true });
    await expect(storage.put(KEY_B, Readable.from([Buffer.from('second')]), limits)).resolves.toEqual({ size: 6 });
    expect(readFileSync(join(dir.path, 'AA', KEY_B), 'utf8')).toBe('second');
    expect(readdirSync(join(dir.path, 'tmp'))).toEqual([]);
  });

  it('refuses a file past the limit with the error given and keeps no part of it', async () => {
    await expect(storage.put(KEY_A, Readable.from([randomBytes(limits.maxBytes), Buffer.from('x')]), limits)).rejects.toThrow('too large');
    expect(existsSync(join(dir.path, 'AA', KEY_A))).toBe(false);
    expect(readdirSync(join(dir.path, 'tmp'))).toEqual([]);
  });

  it('deletes a file with its derived files, and a missing one without error', async () => {
    await storage.put(KEY_A, Readable.from([Buffer.from('file')]), limits);
    await storage.put(derivedKey(KEY_A, '100x100c'), Readable.from([Buffer.from('thumb')]), limits);
    await storage.put(KEY_B, Readable.from([Buffer.from('other')]), limits);
    await storage.delete(KEY_A);
    expect(readdirSync(join(dir.path, 'AA'))).toEqual([KEY_B]);
    await expect(storage.delete(KEY_A)).resolves.toBeUndefined();
  });
});
