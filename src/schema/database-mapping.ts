import pluralize from 'pluralize';
import { MappedSchemaNotServedError, type SchemaProblem } from '../start-up-errors.js';
import type {
  DatabaseMapping,
  FieldDefinition,
  GeneratedBy,
  RelationMapping,
  ResourceDefinition,
  ResourceMapping,
  ResourceModel,
  SchemaDefinition,
  SchemaModel,
} from './schema-model.js';

/**
 * The vocabulary of schemas that map an existing database (docs/existing-database.md): a
 * top-level `database: {existing: true}`, and on resources `table`, `key`, `readOnly`, `plural`,
 * on fields `column`, `generated`, `type: decimal | time`, `format: int64`, on relations
 * composite `foreignKey` lists, `references` and `onDelete`. Checked here, apart from the
 * checks every schema has (compile-schema.ts), and compiled into {@link DatabaseMapping}.
 */

/** Whether the document maps an existing database. */
export function mapsExistingDatabase(definition: Pick<SchemaDefinition, 'database'>): boolean {
  return definition.database !== undefined;
}

/** A resource's plural when the file gives none: its name when that is a plural, else the singular's plural. */
export function defaultPlural(name: string, singular: string): string {
  return name !== singular ? name : pluralize.plural(singular);
}

/** What only a mapped schema may say, found in a schema that is not one. */
export function unmappedSchemaProblems(definition: SchemaDefinition): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const refuse = (path: string, what: string): void => {
    problems.push({ path, message: `${what} is for schemas that map an existing database (database: {existing: true}, written by restgraph init --from <database-url>)` });
  };
  for (const [name, resource] of Object.entries(definition.resources)) {
    const at = `resources.${name}`;
    for (const key of ['table', 'key', 'readOnly', 'plural'] as const) if (resource[key] !== undefined) refuse(`${at}.${key}`, `"${key}"`);
    for (const [fieldName, field] of Object.entries(resource.fields ?? {})) {
      const fieldAt = `${at}.fields.${fieldName}`;
      for (const key of ['column', 'generated', 'precision', 'scale'] as const) if (field[key] !== undefined) refuse(`${fieldAt}.${key}`, `"${key}"`);
      if (field.type === 'decimal' || field.type === 'time') refuse(`${fieldAt}.type`, `type ${field.type}`);
      if (field.format === 'int64' || field.format === 'base64' || field.format === 'array') refuse(`${fieldAt}.format`, `format ${field.format}`);
    }
    for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
      const relationAt = `${at}.relations.${relationName}`;
      if (Array.isArray(relation.foreignKey)) refuse(`${relationAt}.foreignKey`, 'a list of foreign key fields');
      for (const key of ['references', 'onDelete'] as const) if (relation[key] !== undefined) refuse(`${relationAt}.${key}`, `"${key}" on a relation`);
    }
  }
  return problems;
}

/** The checks of one field of a mapped resource that the JSON Schema cannot make. */
export function mappedFieldProblems(at: string, field: FieldDefinition): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  if (field.format === 'int64' && field.type !== 'integer') problems.push({ path: `${at}.format`, message: 'int64 applies to integer fields' });
  if (field.format === 'base64' && field.type !== 'string') problems.push({ path: `${at}.format`, message: 'base64 applies to string fields' });
  if (field.format === 'array' && field.type !== 'json') problems.push({ path: `${at}.format`, message: 'array applies to json fields (a PostgreSQL array column)' });
  for (const key of ['precision', 'scale'] as const) {
    if (field[key] !== undefined && field.type !== 'decimal') problems.push({ path: `${at}.${key}`, message: `"${key}" applies to decimal fields, not ${field.type}` });
  }
  if (field.scale !== undefined && field.precision !== undefined && field.scale > field.precision) problems.push({ path: `${at}.scale`, message: 'scale is greater than precision' });
  if (field.generated === 'uuid' && field.format !== 'uuid') problems.push({ path: `${at}.generated`, message: 'generated: uuid needs a string field with format: uuid' });
  if (field.generated !== undefined && field.default !== undefined) problems.push({ path: `${at}.default`, message: 'a generated field takes no default: the database (or restgraph) fills it' });
  return problems;
}

/**
 * Checks the mapped vocabulary across resources (keys, columns, relations) and compiles the
 * mapping. `resources` are the compiled resources (their relations already set).
 */
export function compileMapping(definition: SchemaDefinition, resources: ReadonlyMap<string, ResourceModel>, problems: SchemaProblem[]): DatabaseMapping {
  const mapped = new Map<string, ResourceMapping>();
  const tables = new Map<string, string>();
  for (const [name, resource] of Object.entries(definition.resources)) {
    const model = resources.get(name);
    if (model === undefined) continue;
    const at = `resources.${name}`;
    const table = resource.table ?? name;
    const clash = tables.get(table);
    if (clash !== undefined) problems.push({ path: `${at}.table`, message: `table "${table}" is also served by resource "${clash}"` });
    tables.set(table, name);
    if (model.singleton) problems.push({ path: `${at}.singleton`, message: 'a resource of a mapped database is a table, not a singleton' });

    const key = resource.key ?? [];
    for (const [i, fieldName] of key.entries()) {
      if (!model.fields.has(fieldName)) problems.push({ path: `${at}.key[${i}]`, message: `${name} has no field "${fieldName}"` });
    }
    const readOnly = resource.readOnly === true;
    if (key.length === 0 && !readOnly) {
      problems.push({ path: at, message: `${name} has no key: list its primary key's fields in "key", or serve it with readOnly: true (a view, a table without a primary key)` });
    }
    const columns = new Map<string, string>();
    const generated = new Map<string, GeneratedBy>();
    const columnOwners = new Map<string, string>();
    for (const [fieldName, field] of Object.entries(resource.fields ?? {})) {
      const column = field.column ?? fieldName;
      const owner = columnOwners.get(column);
      if (owner !== undefined) problems.push({ path: `${at}.fields.${fieldName}.column`, message: `column "${column}" is also field "${owner}"` });
      columnOwners.set(column, fieldName);
      columns.set(fieldName, column);
      if (field.generated !== undefined) generated.set(fieldName, field.generated);
    }
    mapped.set(name, {
      ...(definition.database?.schema === undefined ? {} : { schema: definition.database.schema }),
      table,
      key: Object.freeze([...key]),
      readOnly,
      plural: resource.plural ?? defaultPlural(name, model.singular),
      columns,
      generated,
      relations: compileRelations(name, resource, definition, resources, problems),
    });
  }
  const plurals = new Map<string, string>();
  for (const [name, resource] of mapped) {
    const other = plurals.get(resource.plural);
    if (other !== undefined || (resources.has(resource.plural) && resource.plural !== name) || [...resources.values()].some((r) => r.singular === resource.plural)) {
      problems.push({ path: `resources.${name}.plural`, message: `plural "${resource.plural}" is also the name of another resource${other === undefined ? '' : ` (${other})`}; set another` });
    }
    plurals.set(resource.plural, name);
  }
  return { ...(definition.database?.schema === undefined ? {} : { schema: definition.database.schema }), resources: mapped };
}

/** Each relation's foreign key: the fields on the side that holds it, and those they point at (the key of the other side, unless `references`). */
function compileRelations(
  name: string,
  resource: ResourceDefinition,
  definition: SchemaDefinition,
  resources: ReadonlyMap<string, ResourceModel>,
  problems: SchemaProblem[],
): Map<string, RelationMapping> {
  const out = new Map<string, RelationMapping>();
  for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
    const at = `resources.${name}.relations.${relationName}`;
    const kind = relation.hasMany === undefined ? 'belongsTo' : 'hasMany';
    const target = relation.hasMany ?? relation.belongsTo ?? '';
    const targetModel = resources.get(target);
    const model = resources.get(name);
    if (targetModel === undefined || model === undefined) continue;
    const [holder, pointed] = kind === 'belongsTo' ? [model, targetModel] : [targetModel, model];
    const fields = Array.isArray(relation.foreignKey) ? relation.foreignKey : [relation.foreignKey];
    for (const field of fields) {
      if (!holder.fields.has(field)) problems.push({ path: `${at}.foreignKey`, message: `${holder.name} has no field "${field}"` });
    }
    const targetFields = relation.references ?? definition.resources[pointed.name]?.key ?? [];
    if (relation.references !== undefined && kind === 'hasMany') {
      problems.push({ path: `${at}.references`, message: 'references is written on the belongsTo side (the fields of the resource pointed at)' });
    }
    for (const field of targetFields) {
      if (!pointed.fields.has(field)) problems.push({ path: `${at}.references`, message: `${pointed.name} has no field "${field}"` });
    }
    if (targetFields.length !== fields.length) {
      problems.push({
        path: `${at}.foreignKey`,
        message: `${fields.length} foreign key field${fields.length === 1 ? '' : 's'} for ${targetFields.length === 0 ? 'no key' : `the ${targetFields.length} of ${pointed.name} (${targetFields.join(', ')})`}; a resource without a key is pointed at through references`,
      });
    }
    out.set(relationName, {
      kind,
      target,
      fields: Object.freeze([...fields]),
      targetFields: Object.freeze([...targetFields]),
      ...(relation.onDelete === undefined ? {} : { onDelete: relation.onDelete }),
    });
  }
  return out;
}

/**
 * The commands that would create or migrate tables (`migrate`, `import`, `copy`) refuse a mapped
 * schema before they touch the database: its tables are the user's, changed by the user's own
 * migrations (`restgraph serve` serves them as they are, see docs/existing-database.md).
 *
 * @throws MappedSchemaNotServedError when the schema maps an existing database.
 */
export function refuseMappedSchema(schema: Pick<SchemaModel, 'mapping' | 'source'>, command: string): void {
  if (schema.mapping === undefined) return;
  const file = schema.source?.file ?? 'the schema';
  throw new MappedSchemaNotServedError(
    `${file} maps an existing database (database: {existing: true}); ${command} does not change a mapped database's tables, and has not touched it. ` +
      'Change them with your own migrations, then run restgraph init --from <database-url> --update on the schema; restgraph serve serves them as they are. ' +
      'See docs/existing-database.md.',
  );
}
