import { dirname, join } from 'node:path';
import { DATA_FOLDER } from '../store/database-url.js';
import type { FileStorage } from '../core/file-storage.js';
import { ConfigError } from '../errors.js';
import { LocalFileStorage } from './local-file-storage.js';
import { openS3Storage, parseS3Url, type S3Settings } from './s3-settings.js';

/** Where the files of file fields live (docs/files.md#storage). */
export interface FileOptions {
  /** The local directory (`RESTGRAPH_FILES_DIR`); undefined: `files` beside the SQLite database file, else `./data/files`. */
  dir: string | undefined;
  /** An S3-compatible bucket instead (`RESTGRAPH_FILES_URL`, `s3://bucket/prefix`); not with `dir`. */
  url: string | undefined;
  /** How S3 is reached (region, endpoint, addressing, credentials), besides the AWS SDK's own settings. */
  s3: S3Settings;
  /** Downloads streamed through restgraph, or (S3 only) redirected to a presigned URL (`RESTGRAPH_FILES_DOWNLOADS`). @default 'stream' */
  downloads: 'stream' | 'redirect';
  /** How long a presigned download URL is valid, in seconds (`RESTGRAPH_FILES_URL_TTL_SECONDS`, 1 to 3600). @default 60 */
  downloadUrlTtlSeconds: number;
  /** How often orphans are swept (besides once at start-up). 0: only at start-up. @default 3_600_000 (1 h) */
  sweepIntervalMs: number;
  /** A download whose client takes no bytes for this long is closed (docs/files.md#download). @default 30_000 */
  sendTimeoutMs: number;
}

export const DEFAULT_FILE_OPTIONS: Readonly<FileOptions> = Object.freeze({ dir: undefined, url: undefined, s3: {}, downloads: 'stream', downloadUrlTtlSeconds: 60, sweepIntervalMs: 60 * 60 * 1000, sendTimeoutMs: 30_000 });

/**
 * The storage the options name, created and ready: an S3-compatible bucket (`url`), checked
 * reachable, or a local directory, made, whose writes are flushed to disk as durably as the
 * database's commits (`fsync` unless SQLite's `NORMAL` durability was chosen).
 * @throws ConfigError for conflicting settings or a bucket that cannot be reached
 */
export async function createFileStorage(options: FileOptions, databaseUrl: string, durable: boolean): Promise<FileStorage> {
  checkFileOptions(options);
  if (options.url !== undefined) {
    const bucket = await openS3Storage(parseS3Url(options.url), options.s3);
    await bucket.open();
    return bucket;
  }
  const storage = new LocalFileStorage(options.dir ?? defaultFilesDir(databaseUrl), { fsync: durable });
  await storage.open();
  return storage;
}

/** `files` beside a SQLite database file (`data/app.db` → `data/files`); `./data/files` for PostgreSQL or an in-memory database. */
export function defaultFilesDir(databaseUrl: string): string {
  const path = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : /^[a-z][a-z0-9+.-]*:\/\//i.test(databaseUrl) ? undefined : databaseUrl;
  if (path === undefined || path === '' || path.startsWith(':memory:') || path.startsWith('file:')) return join(DATA_FOLDER, 'files');
  return join(dirname(path), 'files');
}

/** Settings that cannot go together. @throws ConfigError naming the setting */
export function checkFileOptions(options: FileOptions): void {
  if (options.url !== undefined && options.dir !== undefined) throw bothStoragesError();
  if (options.downloads === 'redirect' && options.url === undefined) {
    throw new ConfigError('RESTGRAPH_FILES_DOWNLOADS', 'redirect needs S3 storage (RESTGRAPH_FILES_URL): a local directory has no URL to redirect to');
  }
  const ttl = options.downloadUrlTtlSeconds;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 3600) throw new ConfigError('RESTGRAPH_FILES_URL_TTL_SECONDS', `must be a whole number of seconds from 1 to 3600, not ${ttl}`);
}

/** The error of a directory and a bucket both set. */
export function bothStoragesError(): ConfigError {
  return new ConfigError('RESTGRAPH_FILES_URL', 'and RESTGRAPH_FILES_DIR are both set: files are stored in one place, a directory or a bucket; unset one');
}
