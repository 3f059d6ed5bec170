import { printSchema } from 'graphql';
import { resolveOptions } from '../app/app-options.js';
import { optionsFromEnv } from '../app/options-from-env.js';
import { buildGraphqlSchema } from '../graphql/graphql-schema.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../schema/load-schema.js';

export interface ExportFlags {
  schemaFile?: string | undefined;
}

/** `restgraph export graphql`: prints the SDL the server would serve at /graphql/schema.graphql. No database needed. */
export function runExportGraphql(flags: ExportFlags): void {
  const env = optionsFromEnv(process.env);
  const schemaPath = flags.schemaFile ?? (typeof env.schema === 'string' ? env.schema : EXAMPLE_SCHEMA_PATH);
  const options = resolveOptions(env);
  process.stdout.write(`${printSchema(buildGraphqlSchema(loadSchemaFile(schemaPath), options.listLimits))}\n`);
}
