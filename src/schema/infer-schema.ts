import pluralize from 'pluralize';
import { DbJsonError } from '../errors.js';
import { FieldTypeTally } from './infer-field-type.js';
import { withIndefiniteArticle } from './indefinite-article.js';
import { capitalize, fieldNameFor, resourceNameFor, singularFor } from './inferred-names.js';
import type { FieldDefinition, RelationDefinition, ResourceDefinition, SchemaDefinition } from './schema-model.js';

/**
 * The schema of a json-server database (`db.json`): a pure function of the parsed file, read the
 * way json-server reads it. Each top-level array is a resource, each top-level object a singleton;
 * field types come from every value; `<name>Id` fields whose values are all ids of `<name>s`
 * become references with relations both ways. What was inferred, and why, is kept for the comments
 * of `restgraph init --from` and for {@link InferredResource} users that turn items into records.
 */

export interface InferredField {
  /** The key in the data. */
  key: string;
  /** The field's name in the schema (the key, unless renamed). */
  name: string;
  definition: FieldDefinition;
  /** What was inferred and why, one phrase each ("required: present in all 3 posts"). */
  notes: string[];
}

/** How a collection's ids become restgraph's integer ids. */
export type IdPlan =
  /** Every id is a positive integer (or a string of digits): kept, as integers. */
  | { kind: 'kept' }
  /** Ids 1, 2, 3 … in file order; the original id (as text) is kept in `originalField`, if any item had one. */
  | { kind: 'assigned'; originalField: string | undefined };

export interface InferredResource {
  /** The top-level key in the data. */
  key: string;
  name: string;
  singleton: boolean;
  /** Items in the collection (1 for a singleton). */
  count: number;
  ids: IdPlan;
  /** Declared fields, in the order their keys first appear. */
  fields: InferredField[];
  /** Keys whose values fill the system fields (`createdAt`, `updatedAt`: every value a date-time). */
  timestampKeys: string[];
  notes: string[];
}

export interface InferredSchema {
  definition: SchemaDefinition;
  resources: InferredResource[];
}

/** The field holding the ids a collection had, when they could not be kept. */
const ORIGINAL_ID = 'originalId';

export interface InferOptions {
  /**
   * Make a field `required` when every item has a value for it (`restgraph init --from --strict`).
   * Otherwise every field is optional, as json-server's are: its front ends leave fields out of
   * their writes. @default false
   */
  strict?: boolean;
}

/**
 * Infers the schema of a json-server database.
 *
 * @param data the parsed file
 * @param file names the file in errors
 * @throws DbJsonError naming every collection that cannot be a resource (and why)
 */
export function inferSchema(data: unknown, file: string, options: InferOptions = {}): InferredSchema {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new DbJsonError(`${file} must hold an object whose members are collections ({"posts": [...], "profile": {...}}), not ${kindOf(data)}.`);
  }
  const entries = Object.entries(data as Record<string, unknown>);
  const problems: string[] = [];
  for (const [key, value] of entries) {
    if (Array.isArray(value)) {
      const bad = value.findIndex((item) => typeof item !== 'object' || item === null || Array.isArray(item));
      if (bad >= 0) problems.push(`"${key}"[${bad}] is ${kindOf(value[bad])}: every item of a collection must be an object`);
    } else if (typeof value !== 'object' || value === null) {
      problems.push(`"${key}" is ${kindOf(value)}: a top-level member must be an array (a collection) or an object (a singleton)`);
    }
  }
  if (entries.length === 0) problems.push('it has no collections');
  if (problems.length > 0) throw cannotServe(file, problems);
  const resourceNames = new Set<string>();
  const resources = entries.map(([key, value]) => {
    const chosen = resourceNameFor(key, resourceNames);
    const items = Array.isArray(value) ? (value as Record<string, unknown>[]) : [value as Record<string, unknown>];
    const resource = inferResource(key, chosen.name, items, { singleton: !Array.isArray(value), strict: options.strict === true }, problems);
    if (chosen.renamed !== undefined) resource.notes.push(`renamed from "${key}": ${chosen.renamed}`);
    return resource;
  });
  if (problems.length > 0) throw cannotServe(file, problems);

  const byKey = new Map(resources.map((r) => [r.key, r]));
  const ids = new Map(resources.map((r) => [r, idKeys(items(data, r.key))]));
  const relations = new Map<InferredResource, Record<string, RelationDefinition>>(resources.map((r) => [r, {}]));
  const taken = new Map(resources.map((r) => [r, new Set(['id', 'createdat', 'updatedat', ...r.fields.map((f) => f.name.toLowerCase())])]));
  for (const resource of resources) {
    if (resource.singleton) continue;
    const rows = items(data, resource.key);
    for (const field of resource.fields) {
      const target = referenceTarget(field.key, byKey);
      if (target === undefined) continue;
      const targetIds = ids.get(target);
      const values = rows.map((row) => row[field.key]).filter((v) => v !== null && v !== undefined);
      if (targetIds === undefined || values.length === 0 || !values.every((v) => targetIds.has(idKey(v) ?? '\u0000'))) {
        field.notes.push(`not a reference: not every ${field.key} is an id of ${target.key}`);
        continue;
      }
      const required = field.definition.required === true;
      field.definition = { type: 'integer', ...(required ? { required } : {}), references: target.name, onDelete: 'cascade' };
      field.notes.splice(0, 1, `reference: every ${field.key} is an id of ${target.key}; deleting ${withIndefiniteArticle(pluralize.singular(target.key))} deletes its ${resource.key}, as json-server 0.17 did`);
      const ownName = relationName(field.name.replace(/Id$/, ''), taken.get(resource));
      if (ownName !== undefined) (relations.get(resource) ?? {})[ownName] = { belongsTo: target.name, foreignKey: field.name };
      const inverse = relationName(resource.name, taken.get(target)) ?? relationName(`${resource.name}By${capitalize(field.name)}`, taken.get(target));
      if (inverse !== undefined) (relations.get(target) ?? {})[inverse] = { hasMany: resource.name, foreignKey: field.name };
    }
  }
  const singulars = singularsOf(resources);
  const definition: SchemaDefinition = { resources: {} };
  for (const resource of resources) {
    const singular = singulars.get(resource);
    const own = relations.get(resource) ?? {};
    const entry: ResourceDefinition = {
      ...(resource.singleton ? { singleton: true } : {}),
      ...(singular === undefined ? {} : { singular }),
      access: { read: 'public', write: 'public' },
      fields: Object.fromEntries(resource.fields.map((f) => [f.name, f.definition])),
      ...(Object.keys(own).length === 0 ? {} : { relations: own }),
    };
    definition.resources[resource.name] = entry;
  }
  return { definition, resources };
}

function inferResource(key: string, name: string, rows: readonly Record<string, unknown>[], kind: { singleton: boolean; strict: boolean }, problems: string[]): InferredResource {
  const { singleton, strict } = kind;
  const what = singleton ? key : `${rows.length} ${key}`;
  const resource: InferredResource = { key, name, singleton, count: rows.length, ids: { kind: 'kept' }, fields: [], timestampKeys: [], notes: [] };
  resource.notes.push(singleton ? 'a singleton: the top-level value is an object (GET, PUT and PATCH on /' + name + ')' : `a collection of ${rows.length} item${rows.length === 1 ? '' : 's'}`);
  const keys = new Map<string, { tally: FieldTypeTally; present: number }>();
  for (const row of rows) {
    for (const [k, value] of Object.entries(row)) {
      let entry = keys.get(k);
      if (entry === undefined) keys.set(k, (entry = { tally: new FieldTypeTally(), present: 0 }));
      entry.tally.add(value);
      if (value !== null && value !== undefined) entry.present++;
    }
  }
  const taken = new Set(['id', 'createdat', 'updatedat']);
  if (!singleton) {
    resource.ids = idPlan(key, rows, problems);
    if (resource.ids.kind === 'assigned') {
      const original = keys.has('id') ? fieldNameFor(ORIGINAL_ID, taken).name : undefined;
      resource.ids = { kind: 'assigned', originalField: original };
      resource.notes.push(`ids assigned 1, 2, 3 … in file order: not every id is a positive integer${original === undefined ? '' : `; the original ids are kept in ${original}`}`);
      if (original !== undefined) {
        resource.fields.push({
          key: 'id',
          name: original,
          definition: { type: 'string', unique: true },
          notes: [`the original id of each ${pluralize.singular(key)} (unique; optional: records created through the API have none), references to it rewritten to the new ids`],
        });
      }
    } else {
      resource.notes.push('ids kept: every id is a positive integer' + (rows.some((r) => typeof r.id === 'string') ? ' (strings of digits read as integers)' : ''));
    }
  }
  for (const [k, { tally, present }] of keys) {
    if (k === 'id' && !singleton) continue;
    const inferred = tally.result();
    if ((k === 'createdAt' || k === 'updatedAt') && inferred.type === 'datetime' && !singleton) {
      resource.timestampKeys.push(k);
      resource.notes.push(`${k} fills restgraph's own ${k}: every value is a date-time`);
      continue;
    }
    const chosen = fieldNameFor(k, taken);
    const everywhere = rows.length > 0 && present === rows.length;
    const required = strict && everywhere;
    const inAll = `present in ${rows.length === 1 ? (singleton ? key : `the 1 ${pluralize.singular(key)}`) : `all ${what}`}`;
    const notes = [inferred.why, required ? `required: ${inAll}` : everywhere ? `optional: ${inAll} (--strict makes it required)` : `optional: missing or null in ${rows.length - present} of ${what}`];
    if (chosen.renamed !== undefined) notes.push(`renamed from "${k}": ${chosen.renamed}`);
    resource.fields.push({ key: k, name: chosen.name, definition: { type: inferred.type, ...(required ? { required: true } : {}) }, notes });
  }
  return resource;
}

/** Whether a collection's ids can be kept; ids given twice are a problem either way. */
function idPlan(key: string, rows: readonly Record<string, unknown>[], problems: string[]): IdPlan {
  const seen = new Map<string, number>();
  let keep = true;
  for (const [i, row] of rows.entries()) {
    const id = row.id;
    if (!isKeptId(id)) keep = false;
    const k = idKey(id);
    if (k === undefined) continue;
    const first = seen.get(k);
    if (first !== undefined) problems.push(`"${key}"[${i}] has the id ${JSON.stringify(id)} of "${key}"[${first}]: ids must be unique within a collection`);
    else seen.set(k, i);
  }
  return keep ? { kind: 'kept' } : { kind: 'assigned', originalField: undefined };
}

/** A positive safe integer, or a string of its digits (json-server 1.x writes ids as strings). */
export function isKeptId(id: unknown): boolean {
  if (typeof id === 'number') return Number.isSafeInteger(id) && id > 0;
  return typeof id === 'string' && /^[1-9][0-9]{0,15}$/.test(id) && Number.isSafeInteger(Number(id));
}

/** How ids and references compare: `1` and `"1"` are the same id, as json-server's routes take them. */
export function idKey(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'string') return String(value);
  return undefined;
}

function idKeys(rows: readonly Record<string, unknown>[]): Set<string> {
  const out = new Set<string>();
  for (const row of rows) {
    const k = idKey(row.id);
    if (k !== undefined) out.add(k);
  }
  return out;
}

function items(data: unknown, key: string): Record<string, unknown>[] {
  const value = (data as Record<string, unknown>)[key];
  return Array.isArray(value) ? (value as Record<string, unknown>[]) : [];
}

/** The collection `<name>Id` names: `<name>s`, `<name>` or the English plural of `<name>`. */
function referenceTarget(key: string, byKey: ReadonlyMap<string, InferredResource>): InferredResource | undefined {
  if (!key.endsWith('Id') || key.length <= 2) return undefined;
  const stem = key.slice(0, -2);
  for (const candidate of [`${stem}s`, stem, pluralize.plural(stem)]) {
    const target = byKey.get(candidate);
    if (target !== undefined && !target.singleton) return target;
  }
  return undefined;
}

/** `name` when the resource has no field or relation of that name (then it does), else undefined. */
function relationName(name: string, taken: Set<string> | undefined): string | undefined {
  if (taken === undefined || taken.has(name.toLowerCase()) || !/^[A-Za-z][A-Za-z0-9]{0,62}$/.test(name)) return undefined;
  taken.add(name.toLowerCase());
  return name;
}

/** Type names GraphQL schemas already have (a resource's singular names its type): `queries` → `queriesItem`, not `Query`. */
const GRAPHQL_TYPE_NAMES = new Set(['query', 'mutation', 'subscription', 'pageinfo', 'datetime', 'date', 'safeint', 'json', 'string', 'int', 'float', 'boolean', 'id']);

/** The singulars to declare: those restgraph cannot derive (`news`), and clashes (`profile` and `profiles`). */
function singularsOf(resources: readonly InferredResource[]): Map<InferredResource, string> {
  const declared = new Map<InferredResource, string>();
  const used = new Set<string>();
  // A singleton's singular is its name (compile-schema.ts).
  for (const resource of resources.filter((r) => r.singleton)) {
    used.add(resource.name.toLowerCase());
    if (GRAPHQL_TYPE_NAMES.has(resource.name.toLowerCase())) declared.set(resource, `${resource.name}Item`);
  }
  for (const resource of resources.filter((r) => !r.singleton)) {
    let singular = singularFor(resource.name) ?? pluralize.singular(resource.name);
    if (used.has(singular.toLowerCase()) || GRAPHQL_TYPE_NAMES.has(singular.toLowerCase())) singular = `${resource.name}Item`;
    used.add(singular.toLowerCase());
    if (singular !== pluralize.singular(resource.name)) {
      declared.set(resource, singular);
      resource.notes.push(`singular "${singular}": restgraph derives none it can use from "${resource.name}"`);
    }
  }
  return declared;
}

function cannotServe(file: string, problems: readonly string[]): DbJsonError {
  return new DbJsonError(`${file} cannot be served:\n${problems.map((p) => `  ${p}`).join('\n')}`);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value} (${JSON.stringify(value).slice(0, 40)})`;
}
