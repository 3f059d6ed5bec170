import type { ResourceModel, SchemaModel } from '../schema/schema-model.js';
import { CredentialStore, type StoredCredentials } from '../store/credential-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { SqlDatabase, SqlExecutor } from '../store/sql-database.js';
import { importedCredentials } from './accounts/exported-credentials.js';

/**
 * The credentials lines of an export bring (`export data --with-credentials`) into an import:
 * checked with their row (an account of the accounts resource, with its id, and a hash that is an
 * Argon2id PHC string), written with it in the import's transaction, bound to the record's id and
 * `createdAt` as a sign-up binds them, and taken out again with a row that is taken out.
 */
export class ImportCredentials {
  readonly #schema: SchemaModel;
  readonly #store: CredentialStore;
  readonly #now: string;

  constructor(db: SqlDatabase, schema: SchemaModel, now: string) {
    this.#schema = schema;
    this.#store = new CredentialStore(db);
    this.#now = now;
  }

  /** The credentials of a row as they will be stored, or why the row is rejected. */
  check(resource: ResourceModel, record: StoredRecord, credentials: unknown): StoredCredentials | string {
    const accounts = this.#schema.accounts?.resource;
    if (accounts !== resource.name) return `/credentials: only records of the accounts resource${accounts === undefined ? ' (the schema has none: accounts:)' : ` (${accounts})`} have credentials`;
    if (record.id === undefined) return '/credentials: an account imported with its credentials needs its id';
    return importedCredentials(credentials, this.#now, record[this.#schema.accounts?.identifier ?? '']);
  }

  /** Stores the credentials of rows just written. */
  async write(tx: SqlExecutor, resource: ResourceModel, rows: readonly { record: StoredRecord; credentials?: StoredCredentials | undefined }[]): Promise<void> {
    for (const { record, credentials } of rows) {
      if (credentials === undefined) continue;
      await this.#store.restore({ resource: resource.name, recordId: Number(record.id), recordCreatedAt: String(record.createdAt) }, credentials, tx);
    }
  }

  /** Deletes the credentials of rows taken out again (their references pointed nowhere). */
  async forget(tx: SqlExecutor, resource: ResourceModel, ids: readonly number[]): Promise<void> {
    if (this.#schema.accounts?.resource === resource.name) await this.#store.forget(resource.name, ids, tx);
  }
}
