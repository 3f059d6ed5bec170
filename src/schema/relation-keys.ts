import { keyFields, recordId, type RecordId } from './record-key.js';
import type { RelationModel, ResourceModel } from './schema-model.js';

/**
 * The single-column join of a relation: `foreignKey` on the belongsTo side holds `referencedKey` of
 * the other side (`id` on the tables restgraph creates; a mapped table's key, or the columns its
 * foreign key references). Undefined for a mapped composite foreign key.
 */
export function relationJoin(resource: ResourceModel, relation: RelationModel): { foreignKey: string; referencedKey: string } | undefined {
  const mapped = resource.mapping?.relations.get(relation.name);
  if (mapped === undefined) return { foreignKey: relation.foreignKey, referencedKey: 'id' };
  const [foreignKey] = mapped.fields;
  const [referencedKey] = mapped.targetFields;
  if (foreignKey === undefined || referencedKey === undefined || mapped.fields.length > 1) return undefined;
  return { foreignKey, referencedKey };
}

/**
 * The name of the row a belongsTo relation of `record` points to (undefined when its foreign key is
 * empty): the number in the foreign key, or the mapped columns it references when they are the
 * target's key, composite ones too. @throws Error for a mapped foreign key referencing other
 * columns of the target (a unique constraint), which is not followed yet
 */
export function belongsToKeyOf(resource: ResourceModel, relation: RelationModel, target: ResourceModel, record: Readonly<Record<string, unknown>>): RecordId | undefined {
  const mapped = resource.mapping?.relations.get(relation.name);
  if (mapped === undefined) {
    const key = record[relation.foreignKey];
    return typeof key === 'number' ? key : undefined;
  }
  const key = keyFields(target);
  if (mapped.targetFields.length !== key.length || mapped.targetFields.some((field, i) => field !== key[i])) {
    throw new Error(`${resource.name}.${relation.name} references columns of ${target.name} that are not its key`);
  }
  return recordId(target, Object.fromEntries(mapped.fields.map((field, i): [string, unknown] => [key[i] as string, record[field]])));
}

/**
 * The values a hasMany relation's rows hold of `parent`, by the fields that hold them: `{ [foreignKey]: id }`, or
 * the mapped foreign key's columns, each holding the parent's column it references.
 */
export function childKeyValues(resource: ResourceModel, relation: RelationModel, parent: Readonly<Record<string, unknown>>, id: RecordId): Record<string, unknown> {
  const mapped = resource.mapping?.relations.get(relation.name);
  if (mapped === undefined) return { [relation.foreignKey]: id };
  return Object.fromEntries(mapped.fields.map((field, i) => [field, parent[mapped.targetFields[i] as string]]));
}
