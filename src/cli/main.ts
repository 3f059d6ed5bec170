#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { RestgraphError } from '../errors.js';
import { runExportGraphql, runExportOpenapi } from './export-command.js';
import { runMigrate } from './migrate-command.js';
import { runServe } from './serve-command.js';
import { runTokenCreate, runTokenList, runTokenRevoke } from './token-command.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command()
  .name('restgraph')
  .description('Serve a typed resource schema as a REST and GraphQL API with token authentication, on SQLite.')
  .version(version)
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
  .option('-d, --database-url <url>', 'database URL (default $DATABASE_URL or sqlite:./data/restgraph.db)')
  .addHelpText('after', '\nEnvironment: PORT, HOST, DATABASE_URL, RESTGRAPH_SCHEMA, LOG_LEVEL, RESTGRAPH_CORS_ORIGINS, RESTGRAPH_BODY_LIMIT, … (see README).')
  .action(async (schemaFile: string | undefined, flags: { port?: number; host?: string; databaseUrl?: string }) => {
    await runServe({ schemaFile, ...flags });
  });

program
  .command('migrate')
  .description('Bring the database to the schema: show the plan, then apply it.')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('-d, --database-url <url>', 'database URL (default $DATABASE_URL or sqlite:./data/restgraph.db)')
  .option('--dry-run', 'print the changes without applying them')
  .option('--allow-destructive', 'also apply changes that delete data (dropped fields or resources, changed types)')
  .action(async (schemaFile: string | undefined, flags: { databaseUrl?: string; dryRun?: boolean; allowDestructive?: boolean }) => {
    process.exitCode = await runMigrate({ schemaFile, ...flags });
  });

const exporter = program.command('export').description('Print a description of the API generated from the schema.');

exporter
  .command('graphql')
  .description('Print the GraphQL schema (SDL), as served at /graphql/schema.graphql.')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .addHelpText('after', '\nExample:\n  restgraph export graphql my-schema.yaml > schema.graphql')
  .action((schemaFile: string | undefined) => {
    runExportGraphql({ schemaFile });
  });

exporter
  .command('openapi')
  .description('Print the OpenAPI 3.1 document (JSON), as served at /openapi.json (or /<version>/openapi.json with --version).')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('--version <version>', "a version of the schema (v1, …): its versioned paths; default the latest version's unversioned paths")
  .addHelpText('after', '\nExample:\n  restgraph export openapi my-schema.yaml > openapi.json')
  .action((schemaFile: string | undefined, flags: { version?: string }) => {
    runExportOpenapi({ schemaFile, ...flags });
  });

const token = program.command('token').description('Create, list and revoke API keys (works on the database directly).');

token
  .command('create')
  .description('Create an API key. Prints its details, then the key alone on the last line (shown only once).')
  .requiredOption('-s, --scopes <scopes>', 'comma-separated scopes, e.g. users:read,users:write or admin')
  .option('-n, --name <name>', 'a name to recognise the key by', 'cli')
  .option('--subject <subject>', 'the subject the key acts as (owner rules compare it with owner fields)')
  .option('-e, --expires <when>', 'expiry: a duration like 30d, 12h, 1y, or an RFC 3339 date-time')
  .option('-d, --database-url <url>', 'database URL (default $DATABASE_URL or sqlite:./data/restgraph.db)')
  .addHelpText('after', '\nExample:\n  KEY=$(restgraph token create --scopes users:read --name ci | tail -n 1)')
  .action(async (flags: { scopes: string; name?: string; subject?: string; expires?: string; databaseUrl?: string }) => {
    await runTokenCreate(flags);
  });

token
  .command('list')
  .description('List API keys: id, name, prefix, scopes, subject, state, created, last used, expiry. Never the keys.')
  .option('--json', 'print JSON')
  .option('-d, --database-url <url>', 'database URL (default $DATABASE_URL or sqlite:./data/restgraph.db)')
  .action(async (flags: { json?: boolean; databaseUrl?: string }) => {
    await runTokenList(flags);
  });

token
  .command('revoke')
  .description('Revoke an API key by id or prefix (rg_AbCdEfGh).')
  .argument('<id-or-prefix>', 'the id or prefix shown by token list')
  .option('-d, --database-url <url>', 'database URL (default $DATABASE_URL or sqlite:./data/restgraph.db)')
  .action(async (idOrPrefix: string, flags: { databaseUrl?: string }) => {
    await runTokenRevoke({ ...flags, idOrPrefix });
  });

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return Number(value);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof RestgraphError) {
    process.stderr.write(`restgraph: ${error.message} [${error.code}]\n`);
    for (const detail of error.errors ?? []) {
      const where = detail.pointer === undefined ? (detail.parameter ?? detail.header ?? '') : `--${detail.pointer.replace(/^\//, '')}`;
      process.stderr.write(`  ${where}: ${detail.detail}\n`);
    }
  } else {
    process.stderr.write(`restgraph: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exitCode = 1;
}
