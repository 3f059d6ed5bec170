import type { ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { ListQuery } from './list-query.js';

/**
 * `fields=`: the columns a list reads to answer with only these fields: them, `id`, the sort keys
 * (for cursors) and the foreign keys of the belongsTo relations it embeds.
 */
export function neededColumns(resource: ResourceModel, query: ListQuery): string[] {
  const needed = new Set<string>(['id', ...(query.fields ?? []), ...query.sort.map((k) => k.field)]);
  for (const name of query.include) {
    const relation = resource.relations.get(name);
    if (relation?.kind === 'belongsTo') needed.add(relation.foreignKey);
  }
  return [...needed];
}

/** A record with only the fields asked for and the relations embedded, in that order. */
export function project(record: StoredRecord, fields: readonly string[], include: readonly string[]): StoredRecord {
  const out: StoredRecord = {};
  for (const name of fields) out[name] = record[name];
  for (const name of include) out[name] = record[name];
  return out;
}
