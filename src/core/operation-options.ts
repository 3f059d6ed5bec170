import type { SqlExecutor } from '../store/sql-database.js';
import type { StoredRecord } from '../store/list-spec.js';
import type { ValidateOptions } from './record-validator.js';

/** What the core operations (resource-operations.ts) take and give besides records: write options, a list's page, limits. */

export interface WriteOptions extends ValidateOptions {
  /** Replace only: fields left as they are (those the client's API version does not have). */
  keep?: readonly string[];
  /**
   * Update only: whether an object given for a json field is merged into the stored value
   * (JSON Merge Patch, REST's PATCH) rather than replacing it (GraphQL's update). @default true
   */
  mergeJson?: boolean;
  /**
   * Values computed from the row as locked in the transaction (create: the row just inserted;
   * `{}` to learn the names written), stored without the body's validation (file uploads: the
   * fields' new files, checked by the upload; docs/files.md).
   */
  fileValues?: (current: StoredRecord) => StoredRecord;
  /** Checks the row as it is inside the write's transaction; throws to refuse (If-Match). */
  precondition?: (current: StoredRecord) => void;
  /** Runs inside the write's transaction, after it, with its result: commits or rolls back with it. */
  beforeCommit?: (tx: SqlExecutor, result: StoredRecord | undefined) => Promise<void>;
}

export interface ListResult {
  records: StoredRecord[];
  /** Whether rows lie beyond this page, in the direction it was read. */
  more: boolean;
  /** Cursor of the next page, when there is one. */
  next?: string;
  /** Offset of the next page, when there is one and the list pages by offset (search results by relevance). */
  nextOffset?: number;
  /** Every matching row, when the query asked to count. */
  total?: number;
}

export interface OperationLimits {
  /** Most related rows embedded per parent by `include`. @default 100 */
  maxEmbedded: number;
}
