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
