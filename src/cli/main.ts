#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { RestgraphError } from '../errors.js';
import { runMigrate } from './migrate-command.js';
import { runServe } from './serve-command.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command()
  .name('restgraph')
  .description('Serve a typed resource schema as a REST API (GraphQL, auth and webhooks follow), on SQLite.')
  .version(version)
  .showHelpAfterError('(run with --help for usage)');

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

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return Number(value);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof RestgraphError) {
    process.stderr.write(`restgraph: ${error.message} [${error.code}]\n`);
  } else {
    process.stderr.write(`restgraph: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exitCode = 1;
}
