import { idKey, type InferredResource, type InferredSchema } from '../schema/infer-schema.js';
import { resourceNamed, SINGLETON_ID, type SchemaModel } from '../schema/schema-model.js';
import type { ImportItem } from './bulk-import.js';

/**
 * The records of a json-server database as the schema inferred from it takes them
 * ({@link InferredSchema}): keys renamed to field names, ids kept or assigned (the original kept
 * in its field), references rewritten to the ids they point at now, `createdAt`/`updatedAt`
 * date-times into the system fields. A singleton's one record gets id 1.
 *
 * Each item's `line` is its position in its collection, from 1 (`posts[0]` is line 1).
 */
// eslint-disable-next-line @typescript-eslint/require-await -- BulkImport reads an AsyncIterable; these records are in memory already
export async function* dbJsonRecords(data: Readonly<Record<string, unknown>>, inferred: InferredSchema, schema: SchemaModel): AsyncGenerator<ImportItem> {
  const newIds = new Map<string, (value: unknown) => number | undefined>();
  for (const resource of inferred.resources) newIds.set(resource.name, idMapping(resource, itemsOf(data, resource)));
  for (const resource of inferred.resources) {
    const model = resourceNamed(schema, resource.name);
    const references = resource.fields
      .filter((f) => f.definition.references !== undefined)
      .map((f) => ({ key: f.key, name: f.name, to: newIds.get(f.definition.references ?? '') }));
    const plain = resource.fields.filter((f) => f.definition.references === undefined && !(f.key === 'id' && !resource.singleton));
    const originalId = resource.ids.kind === 'assigned' ? resource.ids.originalField : undefined;
    const ownId = newIds.get(resource.name);
    for (const [index, item] of itemsOf(data, resource).entries()) {
      const record: Record<string, unknown> = { id: resource.singleton ? SINGLETON_ID : (ownId?.(item.id) ?? index + 1) };
      if (originalId !== undefined) record[originalId] = idKey(item.id) ?? null;
      for (const field of plain) if (field.key in item) record[field.name] = item[field.key];
      for (const reference of references) {
        const value = item[reference.key];
        record[reference.name] = value === null || value === undefined ? value : (reference.to?.(value) ?? value);
      }
      for (const key of resource.timestampKeys) if (item[key] !== null && item[key] !== undefined) record[key] = item[key];
      yield { line: index + 1, resource: model, record };
    }
  }
}

/** The items of a collection (a singleton's one object as a list of one). */
function itemsOf(data: Readonly<Record<string, unknown>>, resource: InferredResource): Record<string, unknown>[] {
  const value = data[resource.key];
  if (Array.isArray(value)) return value as Record<string, unknown>[];
  return typeof value === 'object' && value !== null ? [value as Record<string, unknown>] : [];
}

/** A collection's new id of each of its original ids (a reference's value): the same integer, or its position. */
function idMapping(resource: InferredResource, items: readonly Record<string, unknown>[]): (value: unknown) => number | undefined {
  if (resource.ids.kind === 'kept') {
    return (value) => {
      const number = Number(value);
      return (typeof value === 'number' || typeof value === 'string') && Number.isSafeInteger(number) ? number : undefined;
    };
  }
  const positions = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const key = idKey(item.id);
    if (key !== undefined) positions.set(key, index + 1);
  }
  return (value) => {
    const key = idKey(value);
    return key === undefined ? undefined : positions.get(key);
  };
}
