import type { ResourceModel } from '../schema/schema-model.js';
import type { NewEvent } from '../store/event-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import { recordId, type RecordId } from '../schema/record-key.js';

/** The event of a change: `user.created`, with the object as REST returns it. */
export function eventOf(kind: 'created' | 'updated' | 'deleted', resource: ResourceModel, object: StoredRecord, previous?: StoredRecord): NewEvent {
  return {
    type: `${resource.singular}.${kind}`,
    resource: resource.name,
    recordId: recordId(resource, object) as RecordId,
    data: previous === undefined ? { object } : { object, previous },
    occurredAt: new Date().toISOString(),
  };
}

/** The previous values of the fields that differ between two versions of a row. */
export function changedFrom(before: StoredRecord, after: StoredRecord): StoredRecord {
  const previous: StoredRecord = {};
  for (const [name, value] of Object.entries(after)) {
    if (JSON.stringify(before[name]) !== JSON.stringify(value)) previous[name] = before[name] ?? null;
  }
  return previous;
}
