import type { SqlDatabase, SqlExecutor } from './sql-database.js';

/** A data file that filled the database (`restgraph serve db.json`'s first start). */
export interface DataSource {
  /** The file as the command named it. */
  file: string;
  /** SHA-256 of its bytes when imported, in hex. */
  sha256: string;
  /** Records imported from it. */
  records: number;
  /** When, as an ISO 8601 instant. */
  importedAt: string;
}

const STATE = '_restgraph_state';
const KEY = 'restgraph.dataSource';

/**
 * The record of the data file imported into the database, in restgraph's state table: written
 * in the import's transaction (committed with its rows), read at each start to tell whether the file has changed since.
 */
export class DataSourceStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** The import that filled the database, if a data file ever did. */
  async latest(): Promise<DataSource | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(STATE).select('value').where('key', '=', KEY).compile());
    if (row === undefined) return undefined;
    const value = JSON.parse(String(row.value)) as Partial<DataSource>;
    return { file: String(value.file), sha256: String(value.sha256), records: Number(value.records), importedAt: String(value.importedAt) };
  }

  /** Records the import, in its transaction `tx` (the record and the rows commit together). */
  async record(source: DataSource, tx: SqlExecutor): Promise<void> {
    const value = JSON.stringify(source);
    await tx.run(this.#db.builder.insertInto(STATE).values({ key: KEY, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).compile());
  }
}
