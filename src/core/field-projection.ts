import type { ResourceModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { ListQuery } from './list-query.js';
import { fieldsRulesTest } from './access-rules/field-reads.js';
import { keyFields } from '../schema/record-key.js';

/**
 * `fields=`: the columns a list reads to answer with only these fields: them, `id`, the sort keys
 * (for cursors), the foreign keys of the belongsTo relations it embeds and the fields their read
 * rules test (to decide whether the principal sees them on each row).
 */
export function neededColumns(resource: ResourceModel, query: ListQuery): string[] {
  const needed = new Set<string>([...keyFields(resource), ...(query.fields ?? []), ...query.sort.map((k) => k.field)]);
  for (const name of query.include) {
    const relation = resource.relations.get(name);
    if (relation?.kind === 'belongsTo') needed.add(relation.foreignKey);
  }
  for (const name of fieldsRulesTest(resource, needed)) needed.add(name);
  return [...needed];
}

/** A record with only the fields asked for (those it has: field access may have hidden some) and the relations embedded, in that order. */
export function project(record: StoredRecord, fields: readonly string[], include: readonly string[]): StoredRecord {
  const out: StoredRecord = {};
  for (const name of fields) if (name in record) out[name] = record[name];
  for (const name of include) if (name in record) out[name] = record[name];
  return out;
}
