import type { Readable } from 'node:stream';

/**
 * The port of file storage (docs/files.md#storage): where the bytes of file fields live. The core
 * and the routes see only this; `src/files/` holds the adapters (a local directory today, an
 * S3-compatible bucket). Keys are restgraph's own (random, URL-safe): never a client's text.
 */
export interface FileStorage {
  /**
   * Stores `body` under `key`, complete or not at all (a reader never sees part of it). Past
   * `maxBytes` it stops, removes what it wrote and rejects with the error `tooLarge()` made; a
   * failing or aborted body also leaves nothing behind. @returns the bytes stored
   */
  put(key: string, body: Readable, options: { maxBytes: number; tooLarge: () => Error }): Promise<{ size: number }>;
  /** The file's size and when it was stored, or undefined when there is none. */
  stat(key: string): Promise<StoredFileInfo | undefined>;
  /** A stream of the file's bytes, all or `range` (inclusive bounds, within its size); undefined when there is none. */
  get(key: string, range?: { start: number; end: number }): Promise<Readable | undefined>;
  /**
   * Deletes the file; no error when there is none. Deleting a file's key also deletes the files
   * derived from it (`<key>.<variant>`, thumbnails), before the file itself: a failure half-way
   * leaves the file, for the sweep to retry.
   */
  delete(key: string): Promise<void>;
  /** Every stored file, for the orphan sweep; derived files only when their file is gone (the others go with theirs). */
  list(): AsyncIterable<{ key: string; modified: Date }>;
  /**
   * A short-lived URL that serves the file's bytes straight from storage (an S3 presigned GET),
   * answering with the `Content-Type` and `Content-Disposition` given; only storages that can
   * serve files themselves have it. It checks nothing: whoever holds the URL reads the file until
   * it expires, so the caller decides access first.
   */
  url?(key: string, options: { expiresInSeconds: number; type: string; disposition: string }): Promise<string>;
  /** Releases what it holds (connections), at shutdown. */
  close?(): Promise<void>;
  /** Where it stores, for log lines (no credentials). */
  readonly description: string;
}

export interface StoredFileInfo {
  size: number;
  modified: Date;
}
