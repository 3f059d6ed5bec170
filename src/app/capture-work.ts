import { CaptureRelay } from '../core/capture-relay.js';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { WorkerLog } from '../retry-backoff.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { ResolvedOptions } from './app-options.js';
import type { Lifecycle } from './lifecycle.js';
import type { Storage } from './storage.js';

/**
 * Starts the relay of captured changes when the schema maps an existing database
 * (docs/existing-database.md#events-for-writes-made-by-other-programs): the rows other programs
 * changed, as `restgraph capture enable`'s triggers record them, become events in the outbox, their
 * objects decoded as the record store decodes a read of the row, and this process's dispatcher is
 * woken at once. Until capture is enabled the relay only looks, now and then, whether it is.
 * Stopped at shutdown after the batch under way (each batch commits or rolls back as a whole).
 */
export async function startCaptureRelay(schema: SchemaModel, parts: { options: ResolvedOptions; storage: Storage; dispatcher: EventDispatcher; workerLog: WorkerLog }, lifecycle: Lifecycle): Promise<void> {
  if (schema.mapping === undefined) return;
  const { storage, dispatcher } = parts;
  const relay = new CaptureRelay(storage.db, storage.events, {
    schema,
    systemSchema: parts.options.systemSchema,
    decodeRow: (resource, row) => storage.records.decodeRow(resource, row),
    pollIntervalMs: parts.options.events.pollIntervalMs,
    onAppended: (events) => dispatcher.committed(events),
  });
  await relay.start(parts.workerLog);
  lifecycle.add(() => relay.stop());
}
