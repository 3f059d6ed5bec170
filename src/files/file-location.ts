import type { FileStorage } from '../core/file-storage.js';
import { ConfigError } from '../errors.js';
import { bothStoragesError, defaultFilesDir } from './create-file-storage.js';
import { openS3Storage, parseS3Url, s3SettingsFromEnv } from './s3-settings.js';
import { LocalFileStorage } from './local-file-storage.js';

/**
 * File storage named by a location, for the commands that carry files between storages
 * (`export data`, `import data`, `copy`; docs/files.md#export-import-and-copy). A location is a
 * directory path (the local storage's layout: `<dir>/<k[0..2]>/<key>`) or an S3-compatible
 * bucket (`s3://bucket/prefix`, reached with the AWS settings of the environment).
 */

export interface OpenFileStorageOptions {
  /** Make the storage where it is missing (a directory and its tmp/); else it is only read. @default true */
  create?: boolean;
  /** Flush each file to disk before it counts as stored. @default true */
  fsync?: boolean;
}

/**
 * The storage at `location`. A storage that is only read is not created (a directory that is not
 * there holds no files). A storage that is written is created, but its temporary files are left
 * alone: a server may be uploading into it meanwhile.
 *
 * @throws ConfigError naming `option` when the location is not one it can open.
 */
export async function openFileStorage(location: string, option: string, options: OpenFileStorageOptions = {}): Promise<FileStorage> {
  if (location.startsWith('s3://')) {
    // A bucket is never made: it must exist and be reachable, whether read or written.
    const bucket = await openS3Storage(parseS3Url(location, option), s3SettingsFromEnv(process.env), option);
    await bucket.open();
    return bucket;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new ConfigError(option, `must be a directory or an s3://<bucket>/<prefix> URL, not "${location}"`);
  }
  if (location.trim() === '') throw new ConfigError(option, 'must name a directory');
  const storage = new LocalFileStorage(location, { fsync: options.fsync ?? true });
  if (options.create ?? true) {
    try {
      await storage.open({ keepTemporary: true });
    } catch (error) {
      throw new ConfigError(option, `cannot make the directory ${location} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  }
  return storage;
}

/**
 * Where the server on `databaseUrl` keeps its files, as `serve` would choose with the same
 * environment: `RESTGRAPH_FILES_URL` (a bucket), else `RESTGRAPH_FILES_DIR`, else `files` beside the SQLite database file (`./data/files`
 * with PostgreSQL).
 */
export function serverFilesLocation(env: Readonly<Record<string, string | undefined>>, databaseUrl: string): string {
  const dir = env.RESTGRAPH_FILES_DIR;
  const url = env.RESTGRAPH_FILES_URL;
  const hasDir = dir !== undefined && dir.trim() !== '';
  if (url !== undefined && url.trim() !== '') {
    if (hasDir) throw bothStoragesError();
    return url.trim();
  }
  return hasDir ? dir : defaultFilesDir(databaseUrl);
}

/** The setting that names the server's storage at `location`, for errors. */
export function serverFilesOption(location: string): string {
  return location.startsWith('s3://') ? 'RESTGRAPH_FILES_URL' : 'RESTGRAPH_FILES_DIR';
}
