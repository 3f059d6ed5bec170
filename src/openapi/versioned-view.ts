import type { FieldModel, RelationModel, ResourceModel, SchemaModel } from '../schema/schema-model.js';
import { resourcesIn, viewOf } from '../schema/version-view.js';

/**
 * The one place the OpenAPI generator reads resources, fields and relations from the schema model,
 * so that per-version views (a resource or field added in, deprecated in or removed in a version,
 * renamed per version) come from the schema's version views (schema/version-view.ts), as REST
 * serves them.
 */

/** A field as one version of the API shows it. */
export interface FieldView {
  readonly model: FieldModel;
  /** The name in this version's bodies and query parameters. */
  readonly name: string;
  readonly deprecated: boolean;
  /** The description, with the deprecation reason when there is one. */
  readonly description: string | undefined;
}

/** A relation as one version shows it; `target` is the target's view. */
export interface RelationView {
  readonly name: string;
  readonly kind: 'hasMany' | 'belongsTo';
  readonly target: ResourceView;
  /** The foreign key's name in this version: hasMany, the target's field holding our id; belongsTo, ours holding the target's. */
  readonly foreignKey: string;
}

/** A resource as one version of the API shows it. */
export interface ResourceView {
  readonly model: ResourceModel;
  /** The plural name in this version's paths. */
  readonly name: string;
  readonly singular: string;
  /** Names the component schemas: `User`, `UserCreate`, … */
  readonly typeName: string;
  readonly description: string | undefined;
  readonly deprecated: boolean;
  /** System fields first (id, createdAt, updatedAt), then declared order. */
  readonly fields: readonly FieldView[];
  /** Declared (writable) fields only. */
  readonly writableFields: readonly FieldView[];
  /** Filled in by {@link resourcesFor} once every resource of the version has its view. */
  readonly relations: readonly RelationView[];
  /** The owner field's name in this version, when rows belong to tokens. */
  readonly owner: string | undefined;
}

/** The fields of `resource` as `version` shows them: under its names, without those it lacks, with its deprecations. */
export function fieldsFor(schema: SchemaModel, resource: ResourceModel, version: string): FieldView[] {
  return viewOf(schema, resource, version).fields.map(({ field, apiName, deprecationReason }) => ({
    model: field,
    name: apiName,
    deprecated: deprecationReason !== undefined,
    description: joinText(field.description, deprecationReason === undefined ? undefined : `Deprecated: ${deprecationReason}`),
  }));
}

/** The resources `version` serves, each with its fields and with relations to resources it also serves. */
export function resourcesFor(schema: SchemaModel, version: string): ResourceView[] {
  const views = new Map<string, ResourceView & { relations: RelationView[] }>();
  // In a deprecated version every operation is deprecated (its responses carry Deprecation).
  const info = schema.versionInfo.get(version);
  const versionReason =
    info?.deprecatedAt === undefined
      ? undefined
      : `${version} is deprecated (since ${info.deprecatedAt.toISOString()}${info.sunsetAt === undefined ? '' : `; it goes away on ${info.sunsetAt.toISOString()}`})${info.successor === undefined ? '' : `: use ${info.successor}`}.`;
  for (const model of resourcesIn(schema, version)) {
    const fields = fieldsFor(schema, model, version);
    const reason = viewOf(schema, model, version).deprecationReason ?? versionReason;
    views.set(model.name, {
      model,
      name: model.name,
      singular: model.singular,
      typeName: model.typeName,
      description: joinText(model.description, reason === undefined ? undefined : `Deprecated: ${reason}`),
      deprecated: reason !== undefined,
      fields,
      writableFields: fields.filter((f) => !f.model.system),
      relations: [],
      owner: model.owner === undefined ? undefined : fields.find((f) => f.model.name === model.owner)?.name,
    });
  }
  for (const view of views.values()) {
    for (const relation of viewOf(schema, view.model, version).relations.values()) {
      const target = views.get(relation.target);
      // A relation to a resource this version does not serve is not part of this version.
      if (target !== undefined) view.relations.push(relationView(relation, view, target));
    }
  }
  return [...views.values()];
}

function relationView(relation: RelationModel, owner: ResourceView, target: ResourceView): RelationView {
  const holder = relation.kind === 'hasMany' ? target : owner;
  const foreignKey = holder.fields.find((field) => field.model.name === relation.foreignKey)?.name ?? relation.foreignKey;
  return { name: relation.name, kind: relation.kind, target, foreignKey };
}

function joinText(...parts: (string | undefined)[]): string | undefined {
  const text = parts.filter((p) => p !== undefined && p !== '').join(' ');
  return text === '' ? undefined : text;
}
