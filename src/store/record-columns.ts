import { canonicalFields, type FieldModel, type ResourceModel } from '../schema/schema-model.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';

/** A resource's columns as rows are read (record-store.ts and the bulk readers): names and the fields to decode, each worked out once per resource. */

/** Column names in canonical order: selecting them gives rows whose keys are already in that order. */
export function columnNames(resource: ResourceModel): string[] {
  let names = columnNameCache.get(resource);
  if (names === undefined) {
    names = canonicalFields(resource).map((f) => f.name);
    columnNameCache.set(resource, names);
  }
  return names;
}

const columnNameCache = new WeakMap<ResourceModel, string[]>();
const decodedFieldCache = new WeakMap<ResourceModel, FieldModel[]>();

/** The fields whose stored value is not already what clients see, under these dialect rules. */
export function decodedFields(resource: ResourceModel, rules: SqlDialectRules): FieldModel[] {
  let fields = decodedFieldCache.get(resource);
  if (fields === undefined) {
    fields = canonicalFields(resource).filter((f) => rules.needsDecode(f, resource));
    decodedFieldCache.set(resource, fields);
  }
  return fields;
}
