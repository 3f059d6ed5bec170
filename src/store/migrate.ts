import { createHash } from 'node:crypto';
import type { FieldDefinition, FieldModel, ResourceDefinition, SchemaDefinition, SchemaModel } from '../schema/schema-model.js';
import { MigrationFailedError, DestructiveMigrationError } from '../errors.js';
import { type SqlDatabase, type SqlExecutor, quoteIdentifier as q } from './sql-database.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';
import { upgradeSystemTables } from './system-migrations.js';
import { refuseMappedSchema } from '../schema/database-mapping.js';

/** One step of bringing the database to the schema. */
export interface MigrationChange {
  /** What happens, in words, e.g. `add field users.bio`. */
  description: string;
  /** Loses data or invalidates stored values: needs `--allow-destructive`. */
  destructive: boolean;
  /** Statements run, in order, inside the migration transaction. */
  statements: string[];
  /** What clients see change, when they do although no data is lost (a field renamed in place). */
  breaking?: string;
  /** The field the change adds or drops (for the refusal's word on renames). */
  field?: { resource: string; name: string; change: 'add' | 'drop' };
}

export interface MigrationPlan {
  changes: MigrationChange[];
  /** Things the operator should know that are not refused (e.g. rows lacking a new required field). */
  warnings: string[];
}

const MIGRATIONS_TABLE = '_restgraph_migrations';

/**
 * Compares the schema with the one the database was last migrated to, and lists what must change.
 * Brings restgraph's own tables up to date first ({@link upgradeSystemTables}).
 */
export async function planMigration(db: SqlDatabase, rules: SqlDialectRules, schema: SchemaModel): Promise<MigrationPlan> {
  refuseMappedSchema(schema, 'a migration');
  await upgradeSystemTables(db);
  const previous = await lastAppliedDefinition(db);
  const changes: MigrationChange[] = [];
  const warnings: string[] = [];
  const before = previous?.resources ?? {};
  const after = schema.definition.resources;

  for (const [name, resource] of Object.entries(after)) {
    const old = before[name];
    if (old === undefined) {
      changes.push(createTable(rules, name, resource));
      const search = searchIndexChange(rules, name, {}, resource);
      if (search?.create !== undefined) changes.push(search.create);
      continue;
    }
    // The full-text index is dropped before the columns it covers change, and built after.
    const search = searchIndexChange(rules, name, old, resource);
    if (search?.drop !== undefined) changes.push(search.drop);
    const oldFields = old.fields ?? {};
    const newFields = resource.fields ?? {};
    for (const [fieldName, field] of Object.entries(newFields)) {
      const was = oldFields[fieldName];
      const renamedFrom = field.renamedFrom;
      if (was === undefined && renamedFrom !== undefined && oldFields[renamedFrom] !== undefined && !(renamedFrom in newFields)) {
        // Renamed: the column keeps its values under the new name (with renamedIn, older API
        // versions still show the old one; without, every version shows the new one).
        const old = oldFields[renamedFrom];
        changes.push({
          description: `rename field ${name}.${renamedFrom} to ${fieldName}`,
          destructive: false,
          ...(field.renamedIn === undefined
            ? { breaking: `renamed in place: every API version shows ${name}.${fieldName} instead of ${renamedFrom} from now on, a breaking change for clients (renamedIn with a new version keeps ${renamedFrom} in earlier versions)` }
            : {}),
          statements: [
            ...(hasIndex(old) ? [`drop index if exists ${q(indexName(name, renamedFrom, old))}`] : []),
            `alter table ${q(name)} rename column ${q(renamedFrom)} to ${q(fieldName)}`,
            ...(hasIndex(old) ? [createIndex(rules, name, fieldName, old)] : []),
          ],
        });
        changes.push(...alterColumn(rules, name, fieldName, old, field));
        continue;
      }
      if (was === undefined) {
        changes.push(addColumn(rules, name, fieldName, field));
        if (field.required === true && field.default === undefined) {
          warnings.push(`${name}.${fieldName} is new and required: rows that already exist have no value for it until they are written`);
        }
        continue;
      }
      changes.push(...alterColumn(rules, name, fieldName, was, field));
    }
    const renamed = new Set(Object.values(newFields).map((f) => f.renamedFrom));
    for (const [fieldName, field] of Object.entries(oldFields)) {
      if (fieldName in newFields || renamed.has(fieldName)) continue;
      changes.push({
        description: `drop field ${name}.${fieldName} and every value stored in it`,
        destructive: true,
        field: { resource: name, name: fieldName, change: 'drop' },
        statements: [
          ...(hasIndex(field) ? [`drop index if exists ${q(indexName(name, fieldName, field))}`] : []),
          `alter table ${q(name)} drop column ${q(fieldName)}`,
        ],
      });
    }
    if (search?.create !== undefined) changes.push(search.create);
  }
  for (const [name, resource] of Object.entries(before)) {
    if (name in after) continue;
    const dropSearch = searchColumns(resource).length > 0 ? rules.dropSearchIndex(name) : [];
    changes.push({ description: `drop resource ${name} and every row in it`, destructive: true, statements: [...dropSearch, `drop table ${q(name)}`] });
  }
  return { changes, warnings };
}

/**
 * Applies a plan in one transaction and records it. Refuses destructive changes unless allowed.
 * Resolves to the changes applied: none when the database already had the schema (another
 * instance starting at the same time applied it).
 *
 * @throws DestructiveMigrationError naming each destructive change when not allowed (and how to say
 *   that a dropped field was renamed instead).
 * @throws MigrationFailedError when a statement fails (e.g. duplicates block a new unique rule).
 */
export async function applyMigration(
  db: SqlDatabase,
  schema: SchemaModel,
  plan: MigrationPlan,
  options: { allowDestructive?: boolean } = {},
): Promise<MigrationChange[]> {
  const destructive = plan.changes.filter((c) => c.destructive);
  if (destructive.length > 0 && options.allowDestructive !== true) {
    throw new DestructiveMigrationError(
      destructive.map((c) => c.description),
      undefined,
      renameAdvice(plan, schema),
    );
  }
  const previous = await lastAppliedDefinition(db);
  if (plan.changes.length === 0 && previous !== undefined && JSON.stringify(previous) === JSON.stringify(schema.definition)) return [];
  const applied = await db.transaction(async (tx) => {
    // Instances starting together each planned from the database as it was: the first to get the
    // write lock applies the plan, and the others find the schema recorded and have nothing to do.
    const recorded = await tx.all(db.builder.selectFrom(MIGRATIONS_TABLE).select('schema').orderBy('id', 'desc').limit(1).compile());
    const text = recorded[0]?.schema;
    if (typeof text === 'string' && JSON.stringify(JSON.parse(text)) === JSON.stringify(schema.definition)) return [];
    for (const change of plan.changes) {
      for (const statement of change.statements) {
        try {
          await tx.run({ sql: statement, parameters: [] });
        } catch (error) {
          throw new MigrationFailedError(`Migration step "${change.description}" failed: ${describeFailure(error)}`, { cause: error });
        }
      }
    }
    await recordMigration(db, tx, schema.definition, plan);
    return plan.changes;
  });
  // Drop statements prepared against the old tables.
  await db.exec('select 1');
  return applied;
}

/**
 * Brings the database to the schema (plan, then apply) while no other instance does the same:
 * what `serve` does at start-up. Resolves to the changes applied. @throws as {@link applyMigration}.
 */
export async function migrateToSchema(db: SqlDatabase, rules: SqlDialectRules, schema: SchemaModel, options: { allowDestructive?: boolean } = {}): Promise<MigrationChange[]> {
  return db.exclusively(async () => applyMigration(db, schema, await planMigration(db, rules, schema), options));
}

/**
 * For each field the plan drops: how the schema says it was renamed instead, so that its data is
 * kept, naming the field the plan adds to the same resource when there is exactly one.
 */
function renameAdvice(plan: MigrationPlan, schema: SchemaModel): string[] {
  const dropped = plan.changes.flatMap((c) => (c.field?.change === 'drop' ? [c.field] : []));
  if (dropped.length === 0) return [];
  // A schema without `versions` is v1 alone.
  const unversioned = schema.definition.versions === undefined;
  const latest = /^v(\d+)$/.exec(schema.latestVersion)?.[1];
  const next = unversioned ? 'v2' : latest === undefined ? '<a new version>' : `v${Number(latest) + 1}`;
  const versions = unversioned ? 'versions: [v1, v2]' : `${next} added to versions`;
  const lines = ['If a dropped field was renamed, say so on the field under its new name, and its data is kept; either:'];
  for (const { resource, name } of dropped) {
    const added = plan.changes.flatMap((c) => (c.field?.change === 'add' && c.field.resource === resource ? [c.field.name] : []));
    const renamed = `${resource}.${added.length === 1 ? (added[0] ?? '') : '<new name>'}`;
    lines.push(
      `  ${renamed}: { …, renamedFrom: ${name} }  renames the column in place: every API version shows the new name (a breaking change for clients)`,
      `  ${renamed}: { …, renamedFrom: ${name}, renamedIn: ${next} }  with ${versions}: the versions before ${next} keep showing ${name}`,
    );
  }
  return lines;
}

/** The schema definition the database was last migrated to, or undefined for a new database. */
export async function lastAppliedDefinition(db: SqlDatabase): Promise<SchemaDefinition | undefined> {
  await upgradeSystemTables(db);
  const rows = await db.all(db.builder.selectFrom(MIGRATIONS_TABLE).select('schema').orderBy('id', 'desc').limit(1).compile());
  const text = rows[0]?.schema;
  return typeof text === 'string' ? (JSON.parse(text) as SchemaDefinition) : undefined;
}

/**
 * The schema definition the database was last migrated to, or undefined when no schema was ever
 * migrated to it (a new or foreign database). Unlike {@link lastAppliedDefinition}, creates
 * nothing in a database that is not restgraph's; in one that is, it brings restgraph's own tables
 * up to date, as every command does.
 */
export async function recordedSchema(db: SqlDatabase): Promise<SchemaDefinition | undefined> {
  const row = (await db.all(db.rules.tableExists(MIGRATIONS_TABLE)))[0];
  if (row === undefined || row.found === false || Number(row.found) === 0) return undefined;
  return lastAppliedDefinition(db);
}

async function recordMigration(db: SqlDatabase, tx: SqlExecutor, definition: SchemaDefinition, plan: MigrationPlan): Promise<void> {
  const insert = db.builder.insertInto(MIGRATIONS_TABLE).values({
    appliedAt: new Date().toISOString(),
    schema: JSON.stringify(definition),
    changes: JSON.stringify(plan.changes.map((c) => c.description)),
  });
  await tx.run(insert.compile());
}

function createTable(rules: SqlDialectRules, name: string, resource: ResourceDefinition): MigrationChange {
  const columns = [
    rules.idColumnDefinition(),
    ...Object.entries(resource.fields ?? {}).map(([fieldName, field]) => `${q(fieldName)} ${rules.columnType(fieldModel(fieldName, field))}`),
    `"createdAt" ${rules.columnType(fieldModel('createdAt', { type: 'datetime' }))} not null`,
    `"updatedAt" ${rules.columnType(fieldModel('updatedAt', { type: 'datetime' }))} not null`,
  ];
  const statements = [`create table ${q(name)} (\n  ${columns.join(',\n  ')}\n)`];
  for (const [fieldName, field] of Object.entries(resource.fields ?? {})) {
    if (hasIndex(field)) statements.push(createIndex(rules, name, fieldName, field));
  }
  return { description: `create resource ${name}`, destructive: false, statements };
}

function addColumn(rules: SqlDialectRules, table: string, fieldName: string, field: FieldDefinition): MigrationChange {
  const type = rules.columnType(fieldModel(fieldName, field));
  const statements = [`alter table ${q(table)} add column ${q(fieldName)} ${type}`];
  if (field.default !== undefined) {
    const stored = rules.encode(fieldModel(fieldName, field), field.default);
    statements.push(`update ${q(table)} set ${q(fieldName)} = ${sqlLiteral(stored)} where ${q(fieldName)} is null`);
  }
  if (hasIndex(field)) statements.push(createIndex(rules, table, fieldName, field));
  return { description: `add field ${table}.${fieldName}`, destructive: false, statements, field: { resource: table, name: fieldName, change: 'add' } };
}

function alterColumn(rules: SqlDialectRules, table: string, fieldName: string, was: FieldDefinition, now: FieldDefinition): MigrationChange[] {
  const changes: MigrationChange[] = [];
  const at = `${table}.${fieldName}`;
  if (was.type !== now.type) {
    // Every old value is a valid new value, stored the same way (text, or a SQLite number).
    const widening = (was.type === 'integer' && now.type === 'number') || (['enum', 'date', 'datetime'].includes(was.type) && now.type === 'string');
    if (widening) {
      const before = rules.columnType(fieldModel(fieldName, was));
      const after = fieldModel(fieldName, now);
      const statements = before === rules.columnType(after) ? [] : rules.changeColumnType(q(table), q(fieldName), after);
      changes.push({ description: `widen ${at} from ${was.type} to ${now.type}`, destructive: false, statements });
    } else {
      // No conversion is safe in general: the old values go, the column comes back empty.
      const dropIndex = hasIndex(was) ? [`drop index if exists ${q(indexName(table, fieldName, was))}`] : [];
      const readd = addColumn(rules, table, fieldName, now).statements;
      changes.push({
        description: `change type of ${at} from ${was.type} to ${now.type}; its stored values are deleted`,
        destructive: true,
        statements: [...dropIndex, `alter table ${q(table)} drop column ${q(fieldName)}`, ...readd],
      });
      return changes;
    }
  }
  if (was.type === 'enum' && now.type === 'enum') {
    const removed = (was.values ?? []).filter((v) => !(now.values ?? []).includes(v));
    if (removed.length > 0) {
      changes.push({
        description: `remove ${removed.join(', ')} from the values of ${at}; rows holding them are set to null`,
        destructive: true,
        statements: [`update ${q(table)} set ${q(fieldName)} = null where ${q(fieldName)} in (${removed.map(sqlLiteral).join(', ')})`],
      });
    }
  }
  if (hasIndex(was) !== hasIndex(now) || (was.unique === true) !== (now.unique === true)) {
    const statements: string[] = [];
    if (hasIndex(was)) statements.push(`drop index if exists ${q(indexName(table, fieldName, was))}`);
    if (hasIndex(now)) statements.push(createIndex(rules, table, fieldName, now));
    changes.push({
      description: now.unique === true && was.unique !== true ? `make ${at} unique` : `change the index of ${at}`,
      destructive: false,
      statements,
    });
  }
  return changes;
}

/** The searchable fields of a resource definition, in declared order. */
function searchColumns(resource: ResourceDefinition): string[] {
  return Object.entries(resource.fields ?? {}).flatMap(([name, field]) => (field.searchable === true && field.type === 'string' ? [name] : []));
}

/**
 * The changes that bring a resource's full-text index from its searchable fields in `was` to
 * those in `now`: a drop (before the resource's other changes) and a create that indexes every
 * existing row (after them). Undefined when the searchable fields stay the same.
 */
function searchIndexChange(rules: SqlDialectRules, table: string, was: ResourceDefinition, now: ResourceDefinition): { drop?: MigrationChange; create?: MigrationChange } | undefined {
  const before = searchColumns(was);
  const after = searchColumns(now);
  if (before.join(',') === after.join(',')) return undefined;
  const change: { drop?: MigrationChange; create?: MigrationChange } = {};
  if (before.length > 0) {
    change.drop = { description: `drop the full-text index of ${table} (${before.join(', ')})`, destructive: false, statements: rules.dropSearchIndex(table) };
  }
  if (after.length > 0) {
    change.create = { description: `build the full-text index of ${table} (${after.join(', ')}) from its rows`, destructive: false, statements: rules.createSearchIndex(table, after) };
  }
  return change;
}

/** What the dialect rules need of a field definition: its type and constraints, under its name. */
function fieldModel(name: string, field: FieldDefinition): FieldModel {
  return { ...field, name, required: false, unique: false, system: false };
}

function hasIndex(field: FieldDefinition): boolean {
  return field.unique === true || field.index === true || field.references !== undefined;
}

function createIndex(rules: SqlDialectRules, table: string, fieldName: string, field: FieldDefinition): string {
  return `create ${field.unique === true ? 'unique ' : ''}index ${q(indexName(table, fieldName, field))} on ${q(table)} (${rules.indexKey(q(fieldName))})`;
}

/** Index names fit PostgreSQL's 63-byte identifiers. */
function indexName(table: string, fieldName: string, field: FieldDefinition): string {
  const name = `rg_${field.unique === true ? 'uq' : 'ix'}_${table}_${fieldName}`;
  if (name.length <= 63) return name;
  return `rg_${field.unique === true ? 'uq' : 'ix'}_${createHash('sha256').update(`${table}.${fieldName}`).digest('hex').slice(0, 32)}`;
}

/** Literal for values that come from the schema file (defaults, enum values), never from requests. */
function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `'${text.replace(/'/g, "''")}'`;
}

function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/unique/i.test(message)) return 'existing rows hold duplicate values, so the field cannot be made unique; remove the duplicates first';
  return message;
}
