import type { ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { laterThan } from './later-than.js';

/**
 * The times restgraph stamps on the rows of the tables it creates: createdAt and updatedAt. A
 * mapped database's tables have no such fields (their own columns, if any, are the database's
 * to fill): nothing is stamped on them.
 */

/** The stamps of a created row. */
export function createStamps(resource: ResourceModel, now: string): StoredRecord {
  return resource.mapping === undefined ? { createdAt: now, updatedAt: now } : {};
}

/** The stamp of an update of `current`: an updatedAt later than the one it has. */
export function updateStamp(resource: ResourceModel, ...current: readonly StoredRecord[]): StoredRecord {
  return resource.mapping === undefined ? { updatedAt: laterThan(...current.map((row) => row.updatedAt)) } : {};
}
