/**
 * Errors of start-up and operator commands (a bad schema, configuration or migration, a database
 * that is missing or not empty, rejected import rows): re-exported by errors.ts with the others.
 */
import { RestgraphError } from './restgraph-error.js';

// ---- start-up: bad schema, configuration or migration ---------------------------------------

/** One problem in a schema file, located by path inside the document and, where known, line and column. */
export interface SchemaProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export class SchemaError extends RestgraphError {
  readonly code = 'RG_SCHEMA_INVALID';
  readonly status = 500;
  readonly title = 'Invalid schema';
  readonly file: string;
  readonly problems: SchemaProblem[];
  constructor(file: string, problems: SchemaProblem[]) {
    const lines = problems.map((p) => {
      const at = p.line === undefined ? '' : `:${p.line}:${p.column ?? 1}`;
      return `  ${file}${at} at ${p.path || '(root)'}: ${p.message}`;
    });
    super(`Invalid schema ${file}:\n${lines.join('\n')}`);
    this.file = file;
    this.problems = problems;
  }
}

export class ConfigError extends RestgraphError {
  readonly code = 'RG_CONFIG_INVALID';
  readonly status = 500;
  readonly title = 'Invalid configuration';
  readonly option: string;
  constructor(option: string, message: string) {
    super(`Invalid configuration ${option}: ${message}`);
    this.option = option;
  }
}

export class DestructiveMigrationError extends RestgraphError {
  readonly code = 'RG_MIGRATION_DESTRUCTIVE';
  readonly status = 500;
  readonly title = 'Destructive migration refused';
  readonly changes: string[];
  /** How to say that a dropped field was renamed instead (renamedFrom), in lines; empty when no field is dropped. */
  readonly renames: string[];
  /**
   * `context`: the schema file and the database, and what to do, in lines (the CLI names the exact
   * commands); by default, the general advice.
   */
  constructor(changes: string[], context?: { schema: string; database: string; advice: string[] }, renames: string[] = []) {
    super(
      `${context === undefined ? 'The schema' : `The schema ${context.schema}`} makes destructive changes to the database${context === undefined ? '' : ` ${context.database}`}:\n` +
        `${changes.map((c) => `  - ${c}`).join('\n')}\n` +
        renames.map((line) => `${line}\n`).join('') +
        (context?.advice ?? ['Nothing was changed. Back up the database, then apply them with `restgraph migrate --allow-destructive` (preview with `restgraph migrate --dry-run`).']).join('\n'),
    );
    this.changes = changes;
    this.renames = renames;
  }
}

export class PortUnavailableError extends RestgraphError {
  readonly code = 'RG_PORT_UNAVAILABLE';
  readonly status = 500;
  readonly title = 'Cannot listen on the address';
}

/**
 * A command that works on an existing database (the token commands) found none to work on: the
 * SQLite file does not exist, or the database holds no schema. Only `serve` and `migrate` create one.
 */
export class DatabaseNotFoundError extends RestgraphError {
  readonly code = 'RG_DATABASE_NOT_FOUND';
  readonly status = 500;
  readonly title = 'No such database';
}

/**
 * A command that would create or migrate tables was given a schema that maps an existing database
 * (docs/existing-database.md): refused before the database is opened, so none of its tables changes
 * (`restgraph serve` serves such a schema without changing them).
 */
export class MappedSchemaNotServedError extends RestgraphError {
  readonly code = 'RG_MAPPED_SCHEMA_NOT_SERVED';
  readonly status = 500;
  readonly title = 'A mapped database is not migrated';
}

export class MigrationFailedError extends RestgraphError {
  readonly code = 'RG_MIGRATION_FAILED';
  readonly status = 500;
  readonly title = 'Migration failed';
}

/**
 * `restgraph import data` or `restgraph copy` found rows in the database it was to fill: a
 * whole-database import or copy goes into an empty database only, unless told otherwise.
 */
export class DatabaseNotEmptyError extends RestgraphError {
  readonly code = 'RG_DATABASE_NOT_EMPTY';
  readonly status = 500;
  readonly title = 'Database not empty';
}

/**
 * `restgraph serve db.json` or `restgraph init --from db.json` cannot make a schema of the file: it
 * is not JSON, its top level is not collections, or a collection cannot become a resource (ids
 * given twice, items that are not objects). The message names the file and every problem.
 */
export class DbJsonError extends RestgraphError {
  readonly code = 'RG_DB_JSON_INVALID';
  readonly status = 500;
  readonly title = 'Invalid db.json';
}

/**
 * `restgraph copy` found the source's internal tables at another version than this release's: it
 * would misread them (older: a column missing; newer: one it does not know). The source is not
 * upgraded by a copy: it is only read.
 */
export class SystemTablesVersionError extends RestgraphError {
  readonly code = 'RG_SYSTEM_TABLES_VERSION';
  readonly status = 500;
  readonly title = 'Internal tables at another version';
}

/** `restgraph copy` failed while writing the rows: its transaction was rolled back, so the target holds none of them. */
export class CopyFailedError extends RestgraphError {
  readonly code = 'RG_COPY_FAILED';
  readonly status = 500;
  readonly title = 'Copy failed';
}

/** One row a bulk import rejected: where it is in the file and why. */
export interface RejectedRow {
  /** Line of the file (1 for the first; a CSV file's header is line 1). */
  line: number;
  resource: string;
  reason: string;
}

/** A bulk import rejected rows, and imported nothing: `rows` says which and why. */
export class ImportRejectedError extends RestgraphError {
  readonly code = 'RG_IMPORT_REJECTED';
  readonly status = 500;
  readonly title = 'Import rejected';
  /** The rejected rows reported (the first 1,000 by line). */
  readonly rows: readonly RejectedRow[];
  /** How many rows were rejected in all. */
  readonly count: number;

  constructor(detail: string, options: { rows?: readonly RejectedRow[]; count?: number } = {}) {
    super(detail);
    this.rows = options.rows ?? [];
    this.count = options.count ?? this.rows.length;
  }
}

/**
 * `restgraph export data` or `restgraph copy` found rows referencing files that are not in the
 * source's file storage (or not at the size their values say): the message names them. Nothing
 * is written (an export leaves no file; a copy writes no row).
 */
export class FilesMissingError extends RestgraphError {
  readonly code = 'RG_FILES_MISSING';
  readonly status = 500;
  readonly title = 'Files missing';
}
