#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { RestgraphError } from '../errors.js';
import { PACKAGE_VERSION } from '../package-version.js';

// Each command's implementation is loaded when it runs: `--help` and the token commands do not
// load Fastify, GraphQL or the schema compiler (a CLI call took 2 s when main.ts loaded them all).

const CREATING_DATABASE = 'database URL (default $DATABASE_URL, else the schema\'s own SQLite file ./data/<schema file name>.db, created if missing)';
const OPENING_DATABASE = 'database URL (default $DATABASE_URL, else the schema\'s own ./data/<schema file name>.db); never created';
const TOKEN_SCHEMA = 'the schema file the database was served with: selects its database (default $RESTGRAPH_SCHEMA, else the built-in example)';

const program = new Command()
  .name('restgraph')
  .description('Serve a typed resource schema as a REST and GraphQL API with token authentication, on SQLite or PostgreSQL.')
  .version(PACKAGE_VERSION)
  // Options of the program itself come before a command's name, so `export openapi --version v1`
  // reaches that command rather than printing restgraph's own version.
  .enablePositionalOptions()
  .showHelpAfterError('(run with --help for usage)');

// A reader that stops early (`restgraph export openapi | head`) is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

program
  .command('serve')
  .description('Migrate the database to the schema, then serve the API. Stops cleanly on SIGTERM.')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('-p, --port <port>', 'port to listen on (default $PORT or 3000)', parsePort)
  .option('-H, --host <host>', 'address to listen on (default $HOST or 127.0.0.1)')
  .option('-d, --database-url <url>', CREATING_DATABASE)
  .addHelpText('after', '\nEnvironment: PORT, HOST, DATABASE_URL, RESTGRAPH_SCHEMA, LOG_LEVEL, RESTGRAPH_CORS_ORIGINS, RESTGRAPH_BODY_LIMIT, … (see README).')
  .action(async (schemaFile: string | undefined, flags: { port?: number; host?: string; databaseUrl?: string }) => {
    const { runServe } = await import('./serve-command.js');
    await runServe({ schemaFile, ...flags });
  });

program
  .command('migrate')
  .description('Bring the database to the schema: show the plan, then apply it.')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('-d, --database-url <url>', CREATING_DATABASE)
  .option('--dry-run', 'print the changes without applying them')
  .option('--allow-destructive', 'also apply changes that delete data (dropped fields or resources, changed types)')
  .action(async (schemaFile: string | undefined, flags: { databaseUrl?: string; dryRun?: boolean; allowDestructive?: boolean }) => {
    const { runMigrate } = await import('./migrate-command.js');
    process.exitCode = await runMigrate({ schemaFile, ...flags });
  });

const exporter = program.command('export').description('Print a description of the API generated from the schema.');

exporter
  .command('graphql')
  .description('Print the GraphQL schema (SDL), as served at /graphql/schema.graphql.')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .addHelpText('after', '\nExample:\n  restgraph export graphql my-schema.yaml > schema.graphql')
  .action(async (schemaFile: string | undefined) => {
    const { runExportGraphql } = await import('./export-command.js');
    runExportGraphql({ schemaFile });
  });

exporter
  .command('openapi')
  .description('Print the OpenAPI 3.1 document (JSON), as served at /openapi.json (or /<version>/openapi.json with --version).')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('--version <version>', "a version of the schema (v1, …): its versioned paths; default the latest version's unversioned paths")
  .addHelpText('after', '\nExample:\n  restgraph export openapi my-schema.yaml > openapi.json')
  .action(async (schemaFile: string | undefined, flags: { version?: string }) => {
    const { runExportOpenapi } = await import('./export-command.js');
    runExportOpenapi({ schemaFile, ...flags });
  });

const token = program
  .command('token')
  .description('Create, list and revoke API keys (works on a database `serve` or `migrate` made; changes no schema).');

token
  .command('create')
  .description('Create an API key. Prints its details, then the key alone on the last line (shown only once).')
  .argument('[schema-file]', TOKEN_SCHEMA)
  .requiredOption('-s, --scopes <scopes>', 'comma-separated scopes, e.g. users:read,users:write or admin')
  .option('-n, --name <name>', 'a name to recognise the key by', 'cli')
  .option('--subject <subject>', 'the subject the key acts as (owner rules compare it with owner fields)')
  .option('-e, --expires <when>', 'expiry: a duration like 30d, 12h, 1y, or an RFC 3339 date-time')
  .option('-d, --database-url <url>', OPENING_DATABASE)
  .addHelpText('after', '\nExamples:\n  KEY=$(restgraph token create --scopes users:read --name ci | tail -n 1)\n  restgraph token create my-schema.yaml --scopes admin')
  .action(async (schemaFile: string | undefined, flags: { scopes: string; name?: string; subject?: string; expires?: string; databaseUrl?: string }) => {
    const { runTokenCreate } = await import('./token-command.js');
    await runTokenCreate({ schemaFile, ...flags });
  });

token
  .command('list')
  .description('List API keys: id, name, prefix, scopes, subject, state, created, last used, expiry. Never the keys.')
  .argument('[schema-file]', TOKEN_SCHEMA)
  .option('--json', 'print JSON')
  .option('-d, --database-url <url>', OPENING_DATABASE)
  .action(async (schemaFile: string | undefined, flags: { json?: boolean; databaseUrl?: string }) => {
    const { runTokenList } = await import('./token-command.js');
    await runTokenList({ schemaFile, ...flags });
  });

token
  .command('revoke')
  .description('Revoke an API key by id or prefix (rg_AbCdEfGh).')
  .argument('<id-or-prefix>', 'the id or prefix shown by token list')
  .argument('[schema-file]', TOKEN_SCHEMA)
  .option('-d, --database-url <url>', OPENING_DATABASE)
  .action(async (idOrPrefix: string, schemaFile: string | undefined, flags: { databaseUrl?: string }) => {
    const { runTokenRevoke } = await import('./token-command.js');
    await runTokenRevoke({ schemaFile, ...flags, idOrPrefix });
  });

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return Number(value);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof RestgraphError) {
    // The code ends the first line: a command on a later line copies as it is.
    const [first, ...rest] = error.message.split('\n');
    process.stderr.write(`restgraph: ${[`${first ?? ''} [${error.code}]`, ...rest].join('\n')}\n`);
    for (const detail of error.errors ?? []) {
      const where = detail.pointer === undefined ? (detail.parameter ?? detail.header ?? '') : `--${detail.pointer.replace(/^\//, '')}`;
      process.stderr.write(`  ${where}: ${detail.detail}\n`);
    }
  } else {
    process.stderr.write(`restgraph: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exitCode = 1;
}
