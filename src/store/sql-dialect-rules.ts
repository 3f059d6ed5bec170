import type { Expression, RawBuilder, SqlBool } from 'kysely';
import type { FieldModel, ResourceModel } from '../schema/schema-model.js';
import type { TextSearch } from './list-spec.js';

/**
 * What differs between databases above the driver: column types, how values are stored, and the
 * few expressions SQL does not spell the same everywhere. One implementation per dialect folder.
 */
export interface SqlDialectRules {
  /** The database's name as its users know it ("SQLite", "PostgreSQL"), for people to read. */
  readonly product: string;
  /**
   * SELECT … FOR UPDATE / FOR SHARE hold rows for the rest of a transaction. False where one
   * writer at a time holds the whole database (SQLite): there is nothing to lock against.
   */
  readonly rowLocks: boolean;
  /**
   * A mapped integer column that is not int64 holds 32 bits (PostgreSQL's smallint and integer);
   * false where every integer column holds 64 (SQLite). A key past it names no row.
   */
  readonly int32Integers: boolean;
  /** A claim can pass over rows another transaction holds (FOR UPDATE SKIP LOCKED) instead of waiting for them. */
  readonly skipLocked: boolean;
  /**
   * A filter's relation tests inside other relation tests are written as uncorrelated
   * `key IN (SELECT …)` subqueries, each computed once per statement, instead of correlated
   * `EXISTS`: where the planner runs a correlated subquery once per row of the query around it
   * (SQLite), paths nested in paths multiply each other's rows; PostgreSQL turns `EXISTS` into
   * semi- and anti-joins itself.
   */
  readonly uncorrelatedRelationTests: boolean;
  /** A statement (a SqlStatement) whose row has `found` true (or non-zero) when the table exists. */
  tableExists(table: string): { sql: string; parameters: readonly unknown[] };
  /**
   * One statement that runs a row's INSERT … RETURNING (its `parameterCount` parameters first) and
   * the INSERT of its created event into `eventTable` (three more parameters: type, resource,
   * occurredAt; the event's object is the inserted row), returning the row's columns and the
   * event's id as `eventIdColumn`. Absent where the database cannot (SQLite: no writes in WITH).
   */
  insertWithEvent?(rowInsertSql: string, parameterCount: number, eventTable: string, eventIdColumn: string): string;
  /** Column type of a field in CREATE TABLE / ADD COLUMN. */
  columnType(field: FieldModel): string;
  /**
   * Statements that give an existing column (identifiers already quoted) the column type of
   * `field`, keeping its values: only called for widening changes, where every old value is valid.
   */
  changeColumnType(table: string, column: string, field: FieldModel): string[];
  /**
   * Whether ORDER BY must say NULLS FIRST (asc) / NULLS LAST (desc). False where that is already
   * the database's default, so the planner keeps using indexes.
   */
  readonly explicitNullsOrder: boolean;
  /**
   * A field's column (already quoted) as an index key, ordered as list queries order it (nulls
   * first ascending), so the index serves their ORDER BY.
   */
  indexKey(column: string): string;
  /** Column definition of `id`: an integer key the database assigns and never reuses. */
  idColumnDefinition(): string;
  /**
   * The statement that reserves ids of `table` for rows an import brings: it moves the id generator
   * past the largest of the table's ids, its own position and `floor` (the largest id about to be
   * inserted), then `count` further; its one row's `first` is the first id of those `count`. Run
   * under {@link lockForImport}'s lock: no other writer takes an id meanwhile.
   */
  reserveIds(table: string, floor: number, count: number): { sql: string; parameters: readonly unknown[] };
  /**
   * The statement that keeps other writers of `tables` waiting until the import's transaction
   * ends (readers go on); undefined where a transaction already has the only write lock (SQLite).
   * A create with an id the client chose takes it too (RecordStore.claimId), for the same reason:
   * no other writer takes an id from the generator between its move and the row.
   */
  lockForImport(tables: readonly string[]): { sql: string; parameters: readonly unknown[] } | undefined;
  /**
   * A statement whose row's `position` is the largest id the generator of `table` has handed out
   * or been moved past (0 when none): the largest id, or more when the rows of the largest ids
   * were deleted (their ids never come again).
   */
  idGeneratorPosition(table: string): { sql: string; parameters: readonly unknown[] };
  /**
   * Statements that move the generator of `table` so that the next id is past both `position`
   * and the largest id, and never back: a copied table goes on where its original would.
   */
  moveIdGeneratorPast(table: string, position: number): { sql: string; parameters: readonly unknown[] }[];
  /**
   * A statement whose row's `identity` names the database it runs on, whatever URL reached it
   * (SQLite: its file; PostgreSQL: the server, database and schema), to tell two URLs of one
   * database apart from two databases.
   */
  databaseIdentity(): { sql: string; parameters: readonly unknown[] };
  /** JS value (validated) → bound parameter. */
  encode(field: FieldModel, value: unknown): unknown;
  /**
   * Whether a field's raw column values need {@link decode} (false: they are what clients see as
   * they are). `resource`: the field's, when known (a mapped database's columns need more).
   */
  needsDecode(field: FieldModel, resource?: ResourceModel): boolean;
  /** Raw column value → JS value clients see. */
  decode(field: FieldModel, raw: unknown): unknown;
  /** Case-sensitive substring test. */
  contains(column: Expression<unknown>, value: string): RawBuilder<SqlBool>;
  /** Case-sensitive prefix test. */
  startsWith(column: Expression<unknown>, value: string): RawBuilder<SqlBool>;
  /**
   * Whether the column's text, case folded as {@link foldCase} folds it, holds `folded` (already
   * folded) anywhere: a literal substring test, no wildcards.
   */
  containsFolded(column: Expression<unknown>, folded: string): RawBuilder<SqlBool>;
  /** `LIKE` ignoring case, with a backslash as the escape character of `pattern`. */
  likeIgnoringCase(column: Expression<unknown>, pattern: string): RawBuilder<SqlBool>;
  /**
   * Statements that give `table` its full-text index over `columns` (unquoted names of text
   * columns), filled from the rows it has and kept up to date by every later write in the write's
   * own transaction.
   */
  createSearchIndex(table: string, columns: readonly string[]): string[];
  /** Statements that drop the full-text index of `table`, if it has one (before its columns change). */
  dropSearchIndex(table: string): string[];
  /** The condition that a row of `table` matches `search` (through its full-text index). */
  searchMatches(table: string, search: TextSearch): RawBuilder<SqlBool>;
  /**
   * A subquery of the rows of `table` matching `search`: their ids as `_rg_id`, and their
   * relevance as `_rg_rank`, smaller for more relevant rows. When `restricted` (a rule hides some
   * rows of the table from the reader), the relevance must not depend on the hidden rows: a rank
   * weighing words by how many rows of the whole table hold them would tell the reader about them.
   */
  searchRanked(table: string, search: TextSearch, restricted: boolean): RawBuilder<unknown>;
}
