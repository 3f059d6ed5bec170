import { FileCleanup, hasFileFields, sweepOrphans, type FileWorkLog } from '../core/file-fields.js';
import type { FileStorage } from '../core/file-storage.js';
import { createFileStorage } from '../files/create-file-storage.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { RecordStore } from '../store/record-store.js';
import type { ResolvedOptions } from './app-options.js';
import type { Lifecycle } from './lifecycle.js';
import type { DownloadOptions } from '../rest/file-download.js';

/** The file storage of a schema with file fields, and what keeps it consistent with the rows. */
export interface FileSetup {
  storage: FileStorage;
  cleanup: FileCleanup;
  /** How downloads are answered (streamed, or redirected to presigned URLs). */
  downloads: DownloadOptions;
  /** Starts the orphan sweep: once now (in the background), then every sweepIntervalMs. */
  startSweeps(store: RecordStore, log: FileWorkLog): void;
}

/** Opens the file storage when some resource has file fields (docs/files.md); undefined when none has. */
export async function setUpFiles(options: ResolvedOptions, schema: SchemaModel, log: () => FileWorkLog, lifecycle: Lifecycle): Promise<FileSetup | undefined> {
  if (!hasFileFields(schema)) return undefined;
  const storage = await createFileStorage(options.files, options.databaseUrl, options.database.sqliteSynchronous === 'FULL');
  lifecycle.add(async () => storage.close?.());
  const cleanup = new FileCleanup(schema, storage, { warn: (details, message) => log().warn(details, message), info: (details, message) => log().info(details, message) });
  lifecycle.add(() => cleanup.settled());
  return {
    storage,
    cleanup,
    downloads: { ...(options.files.downloads === 'redirect' ? { redirectTtlSeconds: options.files.downloadUrlTtlSeconds } : {}), sendTimeoutMs: options.files.sendTimeoutMs },
    startSweeps(store, sweepLog) {
      let running: Promise<void> | undefined;
      const sweep = (): void => {
        if (running !== undefined) return;
        running = sweepOrphans(schema, store, storage)
          .then((deleted) => {
            if (deleted > 0) sweepLog.info({ deleted, storage: storage.description }, 'deleted files no row references');
          })
          .catch((error: unknown) => sweepLog.warn({ err: error }, 'sweeping orphan files failed'))
          .finally(() => (running = undefined));
      };
      sweep();
      const timer = options.files.sweepIntervalMs > 0 ? setInterval(sweep, options.files.sweepIntervalMs) : undefined;
      timer?.unref();
      lifecycle.add(async () => {
        if (timer !== undefined) clearInterval(timer);
        await running;
      });
    },
  };
}
