import type { FieldModel, RelationModel, ResourceModel, SchemaModel, VersionModel } from './schema-model.js';

/**
 * What one API version shows of the schema: which resources and fields, under which names, and
 * what is deprecated there. Storage always holds every field under its current (latest) name;
 * adapters translate between a version's names and storage through these views.
 */

/** A field as one version shows it. */
export interface VersionedField {
  /** The name clients of this version use. */
  apiName: string;
  field: FieldModel;
  /** Why it is deprecated in this version, when it is. */
  deprecationReason?: string;
}

export interface ResourceView {
  resource: ResourceModel;
  version: VersionModel;
  /** Why the resource is deprecated in this version, when it is. */
  deprecationReason?: string;
  /** The fields this version shows, system fields first, in declared order. */
  fields: readonly VersionedField[];
  byApiName: ReadonlyMap<string, VersionedField>;
  /** Storage name → name in this version. */
  apiNameOf: ReadonlyMap<string, string>;
  /** Storage names of the fields this version lacks: its writes leave them as they are. */
  hidden: readonly string[];
  /** The relations this version shows (their other side exists in it). */
  relations: ReadonlyMap<string, RelationModel>;
  /** Names and fields are those of storage: nothing to translate. */
  identity: boolean;
}

type LifeCycle = { addedIn?: string | undefined; removedIn?: string | undefined };

function exists(schema: SchemaModel, item: LifeCycle, version: VersionModel): boolean {
  const added = item.addedIn === undefined ? 0 : (schema.versionInfo.get(item.addedIn)?.index ?? 0);
  const removed = item.removedIn === undefined ? Infinity : (schema.versionInfo.get(item.removedIn)?.index ?? Infinity);
  return version.index >= added && version.index < removed;
}

function deprecation(schema: SchemaModel, item: { deprecatedIn?: string | undefined; deprecated?: string | undefined }, version: VersionModel): string | undefined {
  if (item.deprecatedIn !== undefined) {
    const from = schema.versionInfo.get(item.deprecatedIn)?.index ?? Infinity;
    if (version.index < from) return undefined;
    return item.deprecated ?? `Deprecated since ${item.deprecatedIn}.`;
  }
  return item.deprecated;
}

function versionNamed(schema: SchemaModel, name: string): VersionModel {
  const version = schema.versionInfo.get(name);
  if (version === undefined) throw new Error(`unknown version ${name}`);
  return version;
}

/** The resources a version serves, in declared order. */
export function resourcesIn(schema: SchemaModel, versionName: string): ResourceModel[] {
  const version = versionNamed(schema, versionName);
  return [...schema.resources.values()].filter((r) => exists(schema, schema.definition.resources[r.name] ?? {}, version));
}

const cache = new WeakMap<SchemaModel, Map<string, ResourceView>>();

/** How `versionName` shows `resource` (which must exist in it). Built once per schema, version and resource. */
export function viewOf(schema: SchemaModel, resource: ResourceModel, versionName: string): ResourceView {
  let views = cache.get(schema);
  if (views === undefined) {
    views = new Map();
    cache.set(schema, views);
  }
  const key = `${versionName}\u0000${resource.name}`;
  let view = views.get(key);
  if (view === undefined) {
    view = buildView(schema, resource, versionNamed(schema, versionName));
    views.set(key, view);
  }
  return view;
}

function buildView(schema: SchemaModel, resource: ResourceModel, version: VersionModel): ResourceView {
  const fields: VersionedField[] = [];
  const hidden: string[] = [];
  let identity = true;
  for (const field of resource.fields.values()) {
    if (!exists(schema, field, version)) {
      hidden.push(field.name);
      identity = false;
      continue;
    }
    const renamedIn = field.renamedIn === undefined ? undefined : schema.versionInfo.get(field.renamedIn)?.index;
    const apiName = field.renamedFrom !== undefined && renamedIn !== undefined && version.index < renamedIn ? field.renamedFrom : field.name;
    if (apiName !== field.name) identity = false;
    const reason = deprecation(schema, field, version);
    fields.push(Object.freeze({ apiName, field, ...(reason === undefined ? {} : { deprecationReason: reason }) }));
  }
  const servedHere = new Set(resourcesIn(schema, version.name).map((r) => r.name));
  const relations = new Map([...resource.relations].filter(([, relation]) => servedHere.has(relation.target)));
  if (relations.size !== resource.relations.size) identity = false;
  const reason = deprecation(schema, schema.definition.resources[resource.name] ?? {}, version);
  return Object.freeze({
    resource,
    version,
    ...(reason === undefined ? {} : { deprecationReason: reason }),
    fields: Object.freeze(fields),
    byApiName: new Map(fields.map((f) => [f.apiName, f])),
    apiNameOf: new Map(fields.map((f) => [f.field.name, f.apiName])),
    hidden: Object.freeze(hidden),
    relations,
    identity,
  });
}
