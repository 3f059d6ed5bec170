import pg from 'pg';
import type { CatalogSelection, ColumnCatalog, DatabaseCatalog, ForeignKeyAction, TableCatalog } from '../../schema/database-catalog.js';
import { ConfigError } from '../../errors.js';

/**
 * Reads a PostgreSQL schema's tables and views from pg_catalog (docs/existing-database.md), in one
 * read-only transaction on one connection of its own: nothing is written, locked beyond the
 * catalog reads, or left behind.
 *
 * @throws ConfigError naming the database URL when it cannot be reached, or the schema does not exist.
 */
export async function readPostgresCatalog(connectionString: string, description: string, selection: CatalogSelection): Promise<DatabaseCatalog> {
  const schema = selection.schema ?? 'public';
  const client = new pg.Client({ connectionString, application_name: 'restgraph init' });
  try {
    await client.connect();
  } catch (error) {
    throw new ConfigError('--from', `cannot reach the database ${description}: ${(error as Error).message}`);
  }
  try {
    await client.query('begin transaction isolation level repeatable read read only');
    const found = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
    if (found.rowCount === 0) throw new ConfigError('--schema', `${description} has no schema "${schema}"`);
    const catalog = await readSchema(client, schema);
    await client.query('rollback');
    return select(catalog, selection);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Keeps the tables named in the selection (every one without). @throws ConfigError naming a table that is not there */
function select(catalog: DatabaseCatalog, selection: CatalogSelection): DatabaseCatalog {
  if (selection.tables === undefined) return catalog;
  const missing = selection.tables.filter((name) => !catalog.tables.some((t) => t.name === name));
  if (missing.length > 0) throw new ConfigError('--tables', `no table or view ${missing.map((m) => `"${m}"`).join(', ')} in schema ${catalog.schema ?? 'public'}`);
  return { ...catalog, tables: catalog.tables.filter((t) => selection.tables?.includes(t.name) === true) };
}

const COLUMNS = `
select c.relname as "table", c.relkind as kind, a.attname as "column",
  format_type(a.atttypid, a.atttypmod) as data_type, a.attnotnull as not_null,
  pg_get_expr(d.adbin, d.adrelid) as "default", a.attidentity as identity, a.attgenerated as generated,
  case when t.typtype = 'e' then array(select e.enumlabel::text from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder) end as enum_values,
  case when t.typcategory = 'A' then format_type(t.typelem, null) end as array_of
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
join pg_type t on t.oid = a.atttypid
left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm')
order by c.relname, a.attnum`;

const KEY_COLUMNS = (keys: string, relation: string): string =>
  `array(select a.attname::text from unnest(${keys}) with ordinality k(num, pos) join pg_attribute a on a.attrelid = ${relation} and a.attnum = k.num order by k.pos)`;

const CONSTRAINTS = `
select c.relname as "table", con.contype as type, ${KEY_COLUMNS('con.conkey', 'con.conrelid')} as columns,
  f.relname as referenced_table, fn.nspname as referenced_schema, ${KEY_COLUMNS('con.confkey', 'con.confrelid')} as referenced_columns,
  con.confdeltype as on_delete
from pg_constraint con
join pg_class c on c.oid = con.conrelid
join pg_namespace n on n.oid = c.relnamespace
left join pg_class f on f.oid = con.confrelid
left join pg_namespace fn on fn.oid = f.relnamespace
where n.nspname = $1 and con.contype in ('p', 'u', 'f')
order by c.relname, con.conname`;

/** Indexes on columns only (no expression, no condition); those of constraints are among them. */
const INDEXES = `
select c.relname as "table", i.indisunique as "unique", i.indisprimary as "primary", ${KEY_COLUMNS('i.indkey::int2[]', 'i.indrelid')} as columns
from pg_index i
join pg_class c on c.oid = i.indrelid
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = $1 and i.indexprs is null and i.indpred is null and i.indisvalid
order by c.relname, i.indexrelid`;

const ON_DELETE: Readonly<Record<string, ForeignKeyAction>> = { a: 'noAction', r: 'restrict', c: 'cascade', n: 'setNull', d: 'setDefault' };

interface ColumnRow {
  table: string;
  kind: string;
  column: string;
  data_type: string;
  not_null: boolean;
  default: string | null;
  identity: string;
  generated: string;
  enum_values: string[] | null;
  array_of: string | null;
}

interface ConstraintRow {
  table: string;
  type: string;
  columns: string[];
  referenced_table: string | null;
  referenced_schema: string | null;
  referenced_columns: string[];
  on_delete: string;
}

async function readSchema(client: pg.Client, schema: string): Promise<DatabaseCatalog> {
  const tables = new Map<string, TableCatalog>();
  const warnings: string[] = [];
  for (const row of (await client.query<ColumnRow>(COLUMNS, [schema])).rows) {
    let table = tables.get(row.table);
    if (table === undefined) {
      table = { name: row.table, kind: row.kind === 'v' || row.kind === 'm' ? 'view' : 'table', columns: [], primaryKey: [], uniques: [], indexes: [], foreignKeys: [] };
      tables.set(row.table, table);
    }
    const column: ColumnCatalog = { name: row.column, dataType: row.data_type, notNull: row.not_null };
    if (row.default !== null) column.default = row.default;
    if (row.identity === 'a') column.identity = 'always';
    if (row.identity === 'd') column.identity = 'byDefault';
    if (row.generated === 's') column.computed = true;
    if (row.enum_values !== null) column.enumValues = row.enum_values;
    if (row.array_of !== null) column.arrayOf = row.array_of;
    table.columns.push(column);
  }
  for (const row of (await client.query<ConstraintRow>(CONSTRAINTS, [schema])).rows) {
    const table = tables.get(row.table);
    if (table === undefined) continue;
    if (row.type === 'p') table.primaryKey = row.columns;
    else if (row.type === 'u') table.uniques.push(row.columns);
    else if (row.referenced_schema !== schema || row.referenced_table === null) {
      warnings.push(`${schema}.${row.table} (${row.columns.join(', ')}) references ${row.referenced_schema ?? '?'}.${row.referenced_table ?? '?'}, outside schema ${schema}: no relation made`);
    } else {
      table.foreignKeys.push({ columns: row.columns, table: row.referenced_table, referencedColumns: row.referenced_columns, onDelete: ON_DELETE[row.on_delete] ?? 'noAction' });
    }
  }
  for (const row of (await client.query<{ table: string; unique: boolean; primary: boolean; columns: string[] }>(INDEXES, [schema])).rows) {
    const table = tables.get(row.table);
    if (table === undefined || row.primary) continue;
    const list = row.unique ? table.uniques : table.indexes;
    if (!list.some((columns) => columns.join('\0') === row.columns.join('\0'))) list.push(row.columns);
  }
  return { dialect: 'postgres', schema, tables: [...tables.values()], warnings };
}
