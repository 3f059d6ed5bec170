import { basename, extname } from 'node:path';
import { EXAMPLE_SCHEMA_PATH } from '../schema/example-schema-path.js';
import { DATA_FOLDER } from '../store/database-url.js';

export { DATA_FOLDER };

/**
 * The database a schema gets when none is named (no `-d`, no `DATABASE_URL`): a SQLite file in
 * ./data named after the schema file, so each schema served in a folder has its own:
 * `my-schema.yaml` → `sqlite:./data/my-schema.db`, the built-in example → `sqlite:./data/example-schema.db`.
 * A schema given as a compiled model has no file name: `sqlite:./data/restgraph.db`.
 */
export function defaultDatabaseUrl(schemaFile: string | undefined): string {
  const file = schemaFile ?? EXAMPLE_SCHEMA_PATH;
  const name = basename(file, extname(file)) || 'restgraph';
  return `sqlite:${DATA_FOLDER}/${name}.db`;
}

/** Where every release before per-schema databases kept its default database (whatever the schema). */
export const LEGACY_DATABASE_URL = `sqlite:${DATA_FOLDER}/restgraph.db`;
