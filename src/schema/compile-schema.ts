import { checkFileField } from './file-field.js';
import pluralize from 'pluralize';
import {
  OPERATION_GROUPS,
  RESERVED_QUERY_PARAMETERS,
  FIELD_NAMED_QUERY_PARAMETERS,
  RESERVED_RESOURCE_NAMES,
  REST_OPERATIONS,
  SYSTEM_FIELDS,
  type AccessOperation,
  type AccessRule,
  type AccessRuleDefinition,
  type FieldDefinition,
  type FieldModel,
  type RelationModel,
  type ResourceDefinition,
  type ResourceModel,
  type RestOperation,
  type SchemaDefinition,
  type SchemaModel,
  type VersionModel,
} from './schema-model.js';
import type { SchemaProblem } from '../errors.js';
import { checkDefault } from './field-json-schema.js';
import { compileAccounts } from './accounts-model.js';
import { parseRateLimit, RATE_LIMIT_FORMAT, type RateLimitPolicy } from './rate-limit-policy.js';
import { compileMapping, mappedFieldProblems, mapsExistingDatabase, unmappedSchemaProblems } from './database-mapping.js';

/**
 * Checks what the JSON Schema cannot (cross references, reserved names, defaults against their
 * own field) and builds the frozen {@link SchemaModel}. Returns every problem found, not the first.
 */
export function compileSchema(definition: SchemaDefinition): { model?: SchemaModel; problems: SchemaProblem[] } {
  const problems: SchemaProblem[] = [];
  const versionInfo = compileVersions(definition.versions ?? ['v1'], problems);
  const versions = [...versionInfo.keys()];
  const checkVersion = (at: string, name: string | undefined): number | undefined => {
    if (name === undefined) return undefined;
    const info = versionInfo.get(name);
    if (info === undefined) problems.push({ path: at, message: `"${name}" is not one of the versions (${versions.join(', ')})` });
    return info?.index;
  };
  const checkLifeCycle = (at: string, item: { addedIn?: string; deprecatedIn?: string; removedIn?: string }): void => {
    const added = checkVersion(`${at}.addedIn`, item.addedIn) ?? 0;
    const deprecated = checkVersion(`${at}.deprecatedIn`, item.deprecatedIn);
    const removed = checkVersion(`${at}.removedIn`, item.removedIn);
    if (removed !== undefined && removed <= added) problems.push({ path: `${at}.removedIn`, message: 'must be a later version than addedIn (and not the first version)' });
    if (deprecated !== undefined && (deprecated < added || (removed !== undefined && deprecated >= removed))) {
      problems.push({ path: `${at}.deprecatedIn`, message: 'must be a version in which it exists (from addedIn, before removedIn)' });
    }
  };
  const resources = new Map<string, ResourceModel>();
  const typeNames = new Map<string, string>();
  // A mapped database's resources are its tables as they are: named as the database names them
  // (a singular table name is kept), without restgraph's id, createdAt and updatedAt.
  const mapped = mapsExistingDatabase(definition);
  if (!mapped) problems.push(...unmappedSchemaProblems(definition));

  for (const [name, resource] of Object.entries(definition.resources)) {
    const at = `resources.${name}`;
    if (RESERVED_RESOURCE_NAMES.includes(name) || /^v[0-9]+$/.test(name)) {
      problems.push({ path: at, message: `"${name}" is reserved by restgraph; choose another resource name` });
    }
    const singleton = resource.singleton === true;
    const singular = resource.singular ?? (singleton ? name : pluralize.singular(name));
    if (singular === name && resource.singular === undefined && !singleton && !mapped) {
      problems.push({ path: at, message: `cannot derive a singular from "${name}"; resource names are plural, or set "singular"` });
    }
    // A mapped table's snake_case name makes a PascalCase type: film_actor → FilmActor.
    const typeName = (mapped ? singular.split('_') : [singular]).map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
    const clash = typeNames.get(typeName);
    if (clash !== undefined) problems.push({ path: at, message: `singular name "${singular}" is also used by resource "${clash}"` });
    typeNames.set(typeName, name);

    checkLifeCycle(at, resource);
    const fields = new Map<string, FieldModel>(mapped ? [] : SYSTEM_FIELDS.map((f) => [f.name, f]));
    const writableFields: FieldModel[] = [];
    for (const [fieldName, field] of Object.entries(resource.fields ?? {})) {
      const fieldAt = `${at}.fields.${fieldName}`;
      if (fields.has(fieldName)) {
        problems.push({ path: fieldAt, message: `"${fieldName}" is a system field every resource already has` });
        continue;
      }
      if (RESERVED_QUERY_PARAMETERS.includes(fieldName) && !FIELD_NAMED_QUERY_PARAMETERS.includes(fieldName)) {
        problems.push({ path: fieldAt, message: `"${fieldName}" is a reserved query parameter; choose another field name` });
      }
      problems.push(...checkField(fieldAt, field, definition));
      if (mapped) problems.push(...mappedFieldProblems(fieldAt, field));
      checkLifeCycle(fieldAt, field);
      if ((field.addedIn !== undefined || field.removedIn !== undefined) && field.required === true && field.default === undefined) {
        problems.push({ path: `${fieldAt}.required`, message: 'a field that some versions lack cannot be required without a default (clients of those versions could not send it)' });
      }
      // renamedFrom alone renames in place (every version shows the new name); with renamedIn,
      // the versions before it keep the old one.
      if (field.renamedIn !== undefined && field.renamedFrom === undefined) {
        problems.push({ path: fieldAt, message: 'renamedIn needs renamedFrom: the old name, shown by the versions before renamedIn' });
      } else if (field.renamedFrom !== undefined) {
        if (field.renamedIn !== undefined) {
          const renamedIn = checkVersion(`${fieldAt}.renamedIn`, field.renamedIn);
          if (renamedIn === 0) problems.push({ path: `${fieldAt}.renamedIn`, message: 'cannot be the first version (no version has the old name)' });
        }
        if (field.renamedFrom === fieldName || field.renamedFrom in (resource.fields ?? {}) || SYSTEM_FIELDS.some((f) => f.name === field.renamedFrom)) {
          problems.push({ path: `${fieldAt}.renamedFrom`, message: `"${field.renamedFrom}" is the name of a field; an old name must be free` });
        }
      }
      const model: FieldModel = Object.freeze({ ...field, name: fieldName, required: field.required ?? false, unique: field.unique ?? false, system: false });
      fields.set(fieldName, model);
      writableFields.push(model);
    }

    const searchable = writableFields.filter((f) => f.searchable === true);
    const shadowing = writableFields.find((f) => FIELD_NAMED_QUERY_PARAMETERS.includes(f.name));
    if (searchable.length > 0 && shadowing !== undefined) {
      problems.push({
        path: `${at}.fields.${shadowing.name}`,
        message: `a resource with searchable fields cannot have a field named "${shadowing.name}", the query parameter of full-text search; rename it (renamedFrom keeps its data)`,
      });
    }
    if (singleton && resource.owner !== undefined) {
      problems.push({ path: `${at}.owner`, message: 'a singleton has one record, which no token owns; leave out owner' });
    } else if (resource.owner !== undefined) {
      const ownerField = fields.get(resource.owner);
      if (ownerField === undefined || ownerField.system) {
        problems.push({ path: `${at}.owner`, message: `"${resource.owner}" is not a declared field of ${name}` });
      } else if (ownerField.type !== 'string' && ownerField.type !== 'integer') {
        problems.push({ path: `${at}.owner`, message: `the owner field must be a string or integer field, not ${ownerField.type}` });
      }
    }
    resources.set(name, {
      name,
      singular,
      typeName,
      ...(resource.description === undefined ? {} : { description: resource.description }),
      fields,
      writableFields,
      relations: new Map(),
      singleton,
      access: compileAccess(resource.access ?? {}),
      rateLimits: compileResourceRateLimits(name, resource.rateLimits ?? {}, `${at}.rateLimits`, problems),
      ...(resource.owner === undefined ? {} : { owner: resource.owner }),
      rules: Object.freeze({ ...resource.rules }),
      presets: Object.freeze({ ...resource.set }),
    });
    for (const preset of Object.keys(resource.set ?? {})) {
      const field = fields.get(preset);
      if (field === undefined || field.system) problems.push({ path: `${at}.set.${preset}`, message: `"${preset}" is not a declared field of ${name}; set fills declared fields` });
    }
  }

  // Relations need every resource's fields, so they come second.
  for (const [name, resource] of Object.entries(definition.resources)) {
    const model = resources.get(name);
    if (model === undefined) continue;
    const relations = model.relations as Map<string, RelationModel>;
    for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
      const at = `resources.${name}.relations.${relationName}`;
      if (model.fields.has(relationName)) {
        problems.push({ path: at, message: `"${relationName}" is already a field of ${name}` });
        continue;
      }
      const kind = relation.hasMany === undefined ? 'belongsTo' : 'hasMany';
      const target = relation.hasMany ?? relation.belongsTo ?? '';
      const targetModel = resources.get(target);
      if (targetModel === undefined) {
        problems.push({ path: `${at}.${kind}`, message: `unknown resource "${target}"` });
        continue;
      }
      if (mapped) {
        // Foreign keys of any key type, composite too: compileMapping checks them.
        const [first = ''] = Array.isArray(relation.foreignKey) ? relation.foreignKey : [relation.foreignKey];
        relations.set(relationName, { name: relationName, kind, target, foreignKey: first });
        continue;
      }
      if (Array.isArray(relation.foreignKey)) continue; // refused by unmappedSchemaProblems
      const holder = kind === 'hasMany' ? targetModel : model;
      const keyField = holder.fields.get(relation.foreignKey);
      const pointsTo = kind === 'hasMany' ? name : target;
      if (keyField === undefined) {
        problems.push({ path: `${at}.foreignKey`, message: `${holder.name} has no field "${relation.foreignKey}"` });
      } else if (keyField.type !== 'integer' || keyField.references !== pointsTo) {
        problems.push({
          path: `${at}.foreignKey`,
          message: `${holder.name}.${relation.foreignKey} must be an integer field with references: ${pointsTo}`,
        });
      }
      relations.set(relationName, { name: relationName, kind, target, foreignKey: relation.foreignKey });
    }
  }

  const rateLimits = compileRateLimits(definition.rateLimits ?? {}, problems);
  const accounts = compileAccounts(definition.accounts, resources, problems);
  const mapping = mapped ? compileMapping(definition, resources, problems) : undefined;
  if (problems.length > 0) return { problems };
  for (const [name, resource] of resources) {
    const resourceMapping = mapping?.resources.get(name);
    if (resourceMapping !== undefined) resource.mapping = resourceMapping;
    Object.freeze(resource);
  }
  const model: SchemaModel = Object.freeze({
    versions: Object.freeze([...versions]),
    versionInfo,
    latestVersion: versions[versions.length - 1] ?? 'v1',
    resources,
    rateLimits,
    ...(accounts === undefined ? {} : { accounts }),
    ...(mapping === undefined ? {} : { mapping }),
    definition,
  });
  return { model, problems };
}

function compileVersions(definitions: NonNullable<SchemaDefinition['versions']>, problems: SchemaProblem[]): Map<string, VersionModel> {
  const out = new Map<string, VersionModel>();
  definitions.forEach((definition, index) => {
    const at = `versions[${index}]`;
    const item = typeof definition === 'string' ? { name: definition } : definition;
    if (out.has(item.name)) {
      problems.push({ path: at, message: `"${item.name}" is listed twice` });
      return;
    }
    const date = (key: 'deprecated' | 'sunset'): Date | undefined => {
      const text = item[key];
      if (text === undefined) return undefined;
      const time = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) ? Date.parse(text) : NaN;
      if (Number.isNaN(time)) problems.push({ path: `${at}.${key}`, message: `"${text}" is not a date like 2026-06-30 or 2026-06-30T00:00:00Z` });
      return Number.isNaN(time) ? undefined : new Date(time);
    };
    const deprecatedAt = date('deprecated');
    const sunsetAt = date('sunset');
    if (sunsetAt !== undefined && deprecatedAt === undefined) problems.push({ path: `${at}.sunset`, message: 'a version with a sunset must say when it was deprecated' });
    if (index === definitions.length - 1 && deprecatedAt !== undefined) problems.push({ path: `${at}.deprecated`, message: 'the latest version cannot be deprecated (nothing succeeds it)' });
    out.set(item.name, {
      name: item.name,
      index: out.size,
      ...(typeof definition === 'object' && definition.description !== undefined ? { description: definition.description } : {}),
      ...(deprecatedAt === undefined ? {} : { deprecatedAt }),
      ...(sunsetAt === undefined ? {} : { sunsetAt }),
    });
  });
  const names = [...out.keys()];
  for (const [i, name] of names.entries()) {
    const successor = names[i + 1];
    const info = out.get(name);
    if (info !== undefined && successor !== undefined) info.successor = successor;
  }
  for (const info of out.values()) Object.freeze(info);
  return out;
}

function policy(text: string, name: string, at: string, problems: SchemaProblem[]): RateLimitPolicy | undefined {
  const parsed = parseRateLimit(text, name);
  if (parsed === undefined) problems.push({ path: at, message: `must be ${RATE_LIMIT_FORMAT}, not "${text}"` });
  return parsed;
}

function compileRateLimits(definition: NonNullable<SchemaDefinition['rateLimits']>, problems: SchemaProblem[]): SchemaModel['rateLimits'] {
  const out: Record<string, RateLimitPolicy> = {};
  for (const name of ['default', 'anonymous', 'graphql'] as const) {
    const text = definition[name];
    if (text === undefined) continue;
    const parsed = policy(text, name, `rateLimits.${name}`, problems);
    if (parsed !== undefined) out[name] = parsed;
  }
  return Object.freeze(out);
}

/** A group's quota is one counter for all its operations; a named operation's overrides it. */
function compileResourceRateLimits(resource: string, definition: NonNullable<ResourceDefinition['rateLimits']>, at: string, problems: SchemaProblem[]): ResourceModel['rateLimits'] {
  const out: Partial<Record<RestOperation, RateLimitPolicy>> = {};
  for (const group of ['read', 'write'] as const) {
    const text = definition[group];
    if (text === undefined) continue;
    const parsed = policy(text, `${resource}.${group}`, `${at}.${group}`, problems);
    if (parsed !== undefined) for (const operation of OPERATION_GROUPS[group]) out[operation] = parsed;
  }
  for (const operation of REST_OPERATIONS) {
    const text = definition[operation];
    if (text === undefined) continue;
    const parsed = policy(text, `${resource}.${operation}`, `${at}.${operation}`, problems);
    if (parsed !== undefined) out[operation] = parsed;
  }
  return Object.freeze(out);
}

function compileAccess(access: NonNullable<ResourceDefinition['access']>): Record<AccessOperation, AccessRule> {
  const rule = (definition: AccessRuleDefinition | undefined): AccessRule => {
    if (definition === undefined || definition === 'authenticated') return { kind: 'authenticated' };
    if (definition === 'public') return { kind: 'public' };
    return { kind: 'scopes', anyOf: Object.freeze([...definition]) };
  };
  const write = access.write;
  return Object.freeze({
    read: rule(access.read),
    create: rule(access.create ?? write),
    update: rule(access.update ?? write),
    delete: rule(access.delete ?? write),
  });
}

function checkField(at: string, field: FieldDefinition, definition: SchemaDefinition): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const only = (keys: string[], types: string[]): void => {
    for (const key of keys) {
      if (key in field && !types.includes(field.type)) {
        problems.push({ path: `${at}.${key}`, message: `"${key}" applies to ${types.join(' and ')} fields, not ${field.type}` });
      }
    }
  };
  only(['min', 'max'], ['integer', 'number']);
  only(['minLength', 'maxLength', 'pattern'], ['string']);
  if (field.format !== 'int64' && field.format !== 'array') only(['format'], ['string']);
  only(['values'], ['enum']);
  only(['searchable'], ['string']);
  only(['references', 'onDelete'], ['integer']);
  only(['maxSize', 'accept', 'multiple', 'maxFiles', 'thumbs'], ['file']);
  if (field.type === 'file') problems.push(...checkFileField(at, field));
  if (field.type === 'enum' && field.values === undefined) problems.push({ path: at, message: 'an enum field needs "values"' });
  if (field.min !== undefined && field.max !== undefined && field.min > field.max) problems.push({ path: `${at}.min`, message: 'min is greater than max' });
  if (field.minLength !== undefined && field.maxLength !== undefined && field.minLength > field.maxLength) {
    problems.push({ path: `${at}.minLength`, message: 'minLength is greater than maxLength' });
  }
  if (field.pattern !== undefined) {
    try {
      new RegExp(field.pattern, 'u');
    } catch (error) {
      problems.push({ path: `${at}.pattern`, message: `not a valid regular expression: ${(error as Error).message}` });
    }
  }
  if (field.references !== undefined && !(field.references in definition.resources)) {
    problems.push({ path: `${at}.references`, message: `unknown resource "${field.references}"` });
  }
  if (field.onDelete !== undefined && field.references === undefined) {
    problems.push({ path: `${at}.onDelete`, message: 'onDelete needs references' });
  }
  if (field.onDelete === 'setNull' && field.required === true) {
    problems.push({ path: `${at}.onDelete`, message: 'setNull is impossible on a required field' });
  }
  if (field.default !== undefined && problems.length === 0) {
    const reason = checkDefault(field);
    if (reason !== undefined) problems.push({ path: `${at}.default`, message: reason });
  }
  return problems;
}
