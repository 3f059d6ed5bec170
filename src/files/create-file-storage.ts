import { dirname, join } from 'node:path';
import { DATA_FOLDER } from '../store/database-url.js';
import type { FileStorage } from '../core/file-storage.js';
import { LocalFileStorage } from './local-file-storage.js';

/** Where the files of file fields live (docs/files.md#storage). */
export interface FileOptions {
  /** The local directory (`RESTGRAPH_FILES_DIR`); undefined: `files` beside the SQLite database file, else `./data/files`. */
  dir: string | undefined;
  /** How often orphans are swept (besides once at start-up). 0: only at start-up. @default 3_600_000 (1 h) */
  sweepIntervalMs: number;
  /** A download whose client takes no bytes for this long is closed (docs/files.md#download). @default 30_000 */
  sendTimeoutMs: number;
}

export const DEFAULT_FILE_OPTIONS: Readonly<FileOptions> = Object.freeze({ dir: undefined, sweepIntervalMs: 60 * 60 * 1000, sendTimeoutMs: 30_000 });

/**
 * The storage the options name, created (its directory made) and ready. Its writes are flushed
 * to disk as durably as the database's commits (`fsync` unless SQLite's `NORMAL` durability was
 * chosen). An S3-compatible adapter comes beside this one (RESTGRAPH_FILES_URL).
 */
export async function createFileStorage(options: FileOptions, databaseUrl: string, durable: boolean): Promise<FileStorage> {
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
