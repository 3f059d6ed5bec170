/**
 * What `restgraph init --from <database-url>` reads from a database's catalog, the same for
 * PostgreSQL and SQLite (store/postgres/postgres-catalog.ts, store/sqlite/sqlite-catalog.ts read
 * it; catalog-schema.ts maps it to a schema): plain data, in the database's own names.
 */

export interface DatabaseCatalog {
  dialect: 'postgres' | 'sqlite';
  /** PostgreSQL: the schema read. */
  schema?: string;
  /** Tables and views, by name. */
  tables: TableCatalog[];
  /** What was read but cannot be served as it is (a foreign key into another schema). */
  warnings: string[];
}

/** Which tables to read. */
export interface CatalogSelection {
  /** PostgreSQL schema (default public). */
  schema?: string;
  /** Only these tables and views (default every one). */
  tables?: readonly string[];
}

export interface TableCatalog {
  name: string;
  kind: 'table' | 'view';
  columns: ColumnCatalog[];
  /** The primary key's columns in key order; empty when there is none. */
  primaryKey: string[];
  /** Unique constraints and unique indexes (without expressions or conditions), their columns in order. */
  uniques: string[][];
  /** Other indexes (without expressions or conditions): the columns in order. */
  indexes: string[][];
  foreignKeys: ForeignKeyCatalog[];
}

export type IdentityKind = 'always' | 'byDefault';

export interface ColumnCatalog {
  name: string;
  /** The type as the database writes it: `character varying(45)`, `numeric(20,2)`, `mpaa_rating`, `text[]`. */
  dataType: string;
  notNull: boolean;
  /** The default's expression, when there is one (`nextval('film_film_id_seq'::regclass)`, `now()`). */
  default?: string;
  /** An identity column (SQLite: the INTEGER PRIMARY KEY that is the rowid). */
  identity?: IdentityKind;
  /** A column computed by the database (GENERATED ALWAYS AS (…)). */
  computed?: boolean;
  /** An enum type's values (PostgreSQL), or the values of a `CHECK (column IN (…))` (SQLite). */
  enumValues?: string[];
  /** An array type's element type (PostgreSQL). */
  arrayOf?: string;
}

export type ForeignKeyAction = 'noAction' | 'restrict' | 'cascade' | 'setNull' | 'setDefault';

export interface ForeignKeyCatalog {
  /** The columns of this table, in the order of the key they point at. */
  columns: string[];
  /** The table pointed at (same schema). */
  table: string;
  /** Its columns pointed at; empty (SQLite) when the key names none: its primary key. */
  referencedColumns: string[];
  onDelete: ForeignKeyAction;
}
