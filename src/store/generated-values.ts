import { randomUUID } from 'node:crypto';
import type { ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from './list-spec.js';

/**
 * The values of a create with the fields restgraph generates filled in: a mapped table's
 * `generated: uuid` fields the create leaves out get a random UUID (the database fills the others).
 */
export function filledKeys(resource: ResourceModel, values: StoredRecord): StoredRecord {
  const generated = resource.mapping?.generated;
  if (generated === undefined || generated.size === 0) return values;
  let filled: StoredRecord | undefined;
  for (const [name, by] of generated) {
    if (by !== 'uuid' || (values[name] !== undefined && values[name] !== null)) continue;
    filled ??= { ...values };
    filled[name] = randomUUID();
  }
  return filled ?? values;
}
