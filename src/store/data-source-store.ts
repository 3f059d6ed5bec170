import type { SqlDatabase } from './sql-database.js';

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

const TABLE = '_restgraph_data_sources';

/**
 * The record of data files imported into the database (system migration 3): written once their
 * import has committed, read at each start to tell whether the file has changed since.
 */
export class DataSourceStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** The latest import, if the database was ever filled from a data file. */
  async latest(): Promise<DataSource | undefined> {
    const rows = await this.#db.all(this.#db.builder.selectFrom(TABLE).select(['file', 'sha256', 'records', 'importedAt']).orderBy('id', 'desc').limit(1).compile());
    const row = rows[0];
    if (row === undefined) return undefined;
    return { file: String(row.file), sha256: String(row.sha256), records: Number(row.records), importedAt: String(row.importedAt) };
  }

  async record(source: DataSource): Promise<void> {
    await this.#db.run(this.#db.builder.insertInto(TABLE).values({ ...source }).compile());
  }
}
