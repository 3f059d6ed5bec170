import { printSchema } from 'graphql';
import { resolveOptions } from '../app/app-options.js';
import { optionsFromEnv } from '../app/options-from-env.js';
import { ConfigError } from '../errors.js';
import { buildGraphqlSchema } from '../graphql/graphql-schema.js';
import { relationPageSizeOf } from '../graphql/query-limits.js';
import { buildOpenApiDocument, openApiDocumentUrls } from '../openapi/openapi-document.js';
import { DOCUMENT_RATE_LIMITS } from '../rest/openapi-routes.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../schema/load-schema.js';

export interface ExportFlags {
  schemaFile?: string | undefined;
}

/** The schema file and resolved options, as `serve` would take them from the same environment. */
function exportInputs(flags: ExportFlags) {
  const env = optionsFromEnv(process.env);
  const schemaPath = flags.schemaFile ?? (typeof env.schema === 'string' ? env.schema : EXAMPLE_SCHEMA_PATH);
  return { schema: loadSchemaFile(schemaPath), options: resolveOptions(env) };
}

/** `restgraph export graphql`: prints the SDL the server would serve at /graphql/schema.graphql. No database needed. */
export function runExportGraphql(flags: ExportFlags): void {
  const { schema, options } = exportInputs(flags);
  process.stdout.write(`${printSchema(buildGraphqlSchema(schema, options.listLimits, relationPageSizeOf(options.graphql, options.listLimits)))}\n`);
}

/**
 * `restgraph export openapi [--version v1]`: prints the OpenAPI document the server would serve at
 * /openapi.json (the latest version, unversioned paths), or with `--version` at /<version>/openapi.json.
 * No database needed.
 */
export function runExportOpenapi(flags: ExportFlags & { version?: string | undefined }): void {
  const { schema, options } = exportInputs(flags);
  const urls = openApiDocumentUrls(schema);
  const target = flags.version === undefined ? urls[0] : urls.find((u) => u.prefix === `/${flags.version ?? ''}`);
  if (target === undefined) throw new ConfigError('--version', `must be one of the schema's versions (${schema.versions.join(', ')}), not "${flags.version ?? ''}"`);
  const document = buildOpenApiDocument(schema, target.version, {
    prefix: target.prefix,
    listLimits: options.listLimits,
    maxEmbedded: options.maxEmbedded,
    rateLimits: DOCUMENT_RATE_LIMITS,
    metrics: options.metrics.enabled ? { public: options.metrics.public } : undefined,
  });
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
}
