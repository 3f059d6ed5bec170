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
  .argument('[schema-file]', 'schema file (YAML or JSON), or a json-server database (db.json: its schema inferred, its data imported on the first start); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('-p, --port <port>', 'port to listen on (default $PORT or 3000)', parsePort)
  .option('-H, --host <host>', 'address to listen on (default $HOST or 127.0.0.1)')
  .option('-d, --database-url <url>', CREATING_DATABASE)
  .option('--compat <mode>', "also take another server's query language on REST lists: json-server, or none (default $RESTGRAPH_COMPAT; for a db.json json-server, else none)")
  .addHelpText('after', '\nEnvironment: PORT, HOST, DATABASE_URL, RESTGRAPH_SCHEMA, RESTGRAPH_COMPAT, LOG_LEVEL, RESTGRAPH_CORS_ORIGINS, RESTGRAPH_BODY_LIMIT, … (see README).')
  .action(async (schemaFile: string | undefined, flags: { port?: number; host?: string; databaseUrl?: string; compat?: string }) => {
    const { runServe } = await import('./serve-command.js');
    await runServe({ schemaFile, ...flags });
  });

program
  .command('init')
  .description('Write a schema file to edit: the schema inferred from a json-server database (db.json), or the tables of an existing database (docs/existing-database.md), with comments saying where each part came from.')
  .requiredOption('--from <db.json or database-url>', "a json-server database: a .json file whose top level is collections ({\"posts\": [...], \"profile\": {...}}); or a database to map: postgres://…, sqlite:<file> or a SQLite file (only read)")
  .option('-o, --output <file>', 'the schema file to write (default: for db.json the data file\'s name with .yaml, db.json → db.yaml, whose default database is the one serve db.json fills; for a database schema.yaml)')
  .option('--force', 'replace the output file if it exists')
  .option('--strict', 'db.json: make a field required when every item of the file has a value for it (by default every field is optional, as json-server\'s are)')
  .option('--schema <name>', 'a database: the PostgreSQL schema to read (default public)')
  .option('--tables <names>', 'a database: only these tables and views, comma-separated (default every one)')
  .option('--update <schema-file>', 'a database: add what the database has and this schema file (written by init --from, then edited) lacks, keeping its edits; written to the file itself unless -o')
  .addHelpText('after', '\nExamples:\n  restgraph init --from db.json\n  restgraph serve db.yaml --compat json-server\n  restgraph init --from postgres://localhost/films --schema public -o films.yaml')
  .action(async (flags: { from: string; output?: string; force?: boolean; strict?: boolean; schema?: string; tables?: string; update?: string }) => {
    const { runInit } = await import('./init-command.js');
    await runInit(flags);
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

const exporter = program.command('export').description('Print a description of the API generated from the schema, or the data of a database.');

exporter
  .command('data')
  .description('Write every record of the database as NDJSON, one {"resource":…,"record":{…}} a line: referenced resources first, rows by id (what `import data` reads).')
  .argument('[schema-file]', TOKEN_SCHEMA)
  .option('-o, --output <file>', 'write to this file (default stdout)')
  .option('-d, --database-url <url>', OPENING_DATABASE)
  .option('--with-credentials', 'also write each account\'s password hash ($argon2id$…) and whether its email is verified, beside its record (import data restores them)')
  .option('--files <dir>', "where the files of file fields go (default <output>.files; required to stdout), read from the server's storage (RESTGRAPH_FILES_DIR, else files beside the database)")
  .option('--no-files', 'export the rows without their files')
  .option('--allow-missing-files', 'export even when some files the rows reference are missing from the storage (each is named)')
  .addHelpText('after', '\nExample:\n  restgraph export data my-schema.yaml -o backup.ndjson')
  .action(async (schemaFile: string | undefined, flags: { output?: string; databaseUrl?: string; withCredentials?: boolean; files?: string | false; allowMissingFiles?: boolean }) => {
    const { runExportData } = await import('./export-data-command.js');
    await runExportData({ schemaFile, ...flags });
  });

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

const importer = program
  .command('import')
  .description('Load records in bulk: one resource from CSV, JSON or NDJSON, or a whole export (import data).')
  .argument('<resource>', 'the resource the records are of (as in its URL: users)')
  .argument('<file>', 'a .csv file (a header row of field names), a .json array of records, or .ndjson (one record a line)')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('-d, --database-url <url>', CREATING_DATABASE)
  .option('--format <format>', 'csv, json or ndjson (default: from the file name)')
  .option('--skip-invalid', 'import the valid rows when some are rejected (each rejected row is still reported)')
  .option('--events', 'write a created event to the outbox for each record (default: none)')
  .addHelpText(
    'after',
    '\nValues are converted by field type (CSV text to integer, number, boolean, json); an empty CSV cell is no value. Ids are kept when given, else assigned. ' +
      'Every rejected row is reported with its line; nothing is imported if any is rejected, unless --skip-invalid.\n\nExamples:\n  restgraph import users users.csv my-schema.yaml\n  restgraph import data backup.ndjson my-schema.yaml',
  )
  .action(async (resource: string, file: string, schemaFile: string | undefined, flags: { databaseUrl?: string; format?: string; skipInvalid?: boolean; events?: boolean }) => {
    const { runImportResource } = await import('./data-command.js');
    await runImportResource({ resource, file, schemaFile, ...flags });
  });

importer
  .command('data')
  .description('Read an export of `export data` into the database (migrated to the schema first, created if missing): one transaction, ids kept, references checked, id generators moved past the largest ids. Nothing is imported if any row is rejected.')
  .argument('<file>', 'the NDJSON file `export data` wrote')
  .argument('[schema-file]', 'schema file (YAML or JSON); default $RESTGRAPH_SCHEMA, else the built-in example')
  .option('-d, --database-url <url>', CREATING_DATABASE)
  .option('--events', 'write a created event to the outbox for each record (default: none)')
  .option('--skip-invalid', 'import the valid rows when some are rejected (each rejected row is still reported)')
  .option('--allow-existing-rows', 'import into tables that already have rows (rows whose ids are taken are rejected)')
  .option('--files <dir>', "where the export's files are (default <file>.files); they go into the server's storage (RESTGRAPH_FILES_DIR, else files beside the database)")
  .option('--null-missing-files', 'import a row whose file is missing from the export without that file (else the row is rejected)')
  .addHelpText('after', '\nExample:\n  restgraph import data backup.ndjson my-schema.yaml -d sqlite:./data/copy.db')
  .action(async (file: string, schemaFile: string | undefined, flags: { databaseUrl?: string; events?: boolean; skipInvalid?: boolean; allowExistingRows?: boolean; files?: string; nullMissingFiles?: boolean }) => {
    const { runImportData } = await import('./data-command.js');
    await runImportData({ file, schemaFile, ...flags });
  });

program
  .command('copy')
  .description(
    'Copy a whole database into another (SQLite to PostgreSQL, and back): records, API keys, webhooks and their pending deliveries, the event outbox and its positions, idempotency keys. ' +
      'The source is read in one snapshot; the target is migrated to the schema recorded in the source, then written in one transaction, its id generators past the largest ids.',
  )
  .requiredOption('--from <url>', 'the database to copy (sqlite:<file> or postgres://…); never created, only read')
  .requiredOption('--to <url>', 'the database to fill (a SQLite file is created if missing); must have no rows, unless --replace')
  .option('--replace', "delete the target's rows in the copy's transaction (the target must have been migrated to the same schema)")
  .option('--from-files <dir>', "where the source's files are (default RESTGRAPH_FILES_DIR, else files beside the --from database)")
  .option('--to-files <dir>', 'where the files go, before the rows (default RESTGRAPH_FILES_DIR, else files beside the --to database)')
  .addHelpText('after', '\nStop writes to the source first (stop its server), so that no write is left behind.\n\nExample:\n  restgraph copy --from sqlite:./data/restgraph.db --to postgres://app:secret@db.internal:5432/app')
  .action(async (flags: { from: string; to: string; replace?: boolean; fromFiles?: string; toFiles?: string }) => {
    const { runCopy } = await import('./copy-command.js');
    await runCopy(flags);
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
  .option('--claims <pairs>', 'claims access rules read as @auth.claims.<name>: name=value pairs, e.g. org=acme,plan=pro (a name repeated makes an array)')
  .option('-e, --expires <when>', 'expiry: a duration like 30d, 12h, 1y, or an RFC 3339 date-time')
  .option('-d, --database-url <url>', OPENING_DATABASE)
  .addHelpText(
    'after',
    '\nExamples:\n  KEY=$(restgraph token create --scopes users:read --name ci | tail -n 1)\n  restgraph token create my-schema.yaml --scopes admin\n  restgraph token create --scopes notes:read --subject 7 --claims org=acme,plan=pro',
  )
  .action(async (schemaFile: string | undefined, flags: { scopes: string; name?: string; subject?: string; claims?: string; expires?: string; databaseUrl?: string }) => {
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

const CAPTURE_SCHEMA = 'the mapped schema file (restgraph init --from wrote it); default $RESTGRAPH_SCHEMA';
const CAPTURE_DATABASE = 'the database the schema maps (default $DATABASE_URL)';
const capture = program
  .command('capture')
  .description('Record the inserts, updates and deletes other programs make to a mapped database\'s tables, for the server to send as events (docs/existing-database.md).');

capture
  .command('enable')
  .description('Install the capture triggers, in one transaction, after showing them and asking.')
  .argument('[schema-file]', CAPTURE_SCHEMA)
  .option('-d, --database-url <url>', CAPTURE_DATABASE)
  .option('--tables <names>', 'only these tables, comma-separated (default every table the schema maps, except read-only ones)')
  .option('-y, --yes', 'install without asking (required when standard input is not a terminal)')
  .addHelpText('after', '\nEnvironment: DATABASE_URL, RESTGRAPH_SCHEMA, RESTGRAPH_SYSTEM_SCHEMA (PostgreSQL: the schema of restgraph\'s own tables, default restgraph).\n\nExample:\n  restgraph capture enable film-rental.yaml -d postgres://localhost/films --tables film,customer')
  .action(async (schemaFile: string | undefined, flags: { databaseUrl?: string; tables?: string; yes?: boolean }) => {
    const { runCaptureEnable } = await import('./capture-command.js');
    await runCaptureEnable({ schemaFile, ...flags });
  });

capture
  .command('disable')
  .description('Remove every capture trigger (and, on PostgreSQL, their function), nothing else.')
  .argument('[schema-file]', CAPTURE_SCHEMA)
  .option('-d, --database-url <url>', CAPTURE_DATABASE)
  .action(async (schemaFile: string | undefined, flags: { databaseUrl?: string }) => {
    const { runCaptureDisable } = await import('./capture-command.js');
    await runCaptureDisable({ schemaFile, ...flags });
  });

capture
  .command('status')
  .description('List the mapped tables: the operations captured, and whether their triggers are installed.')
  .argument('[schema-file]', CAPTURE_SCHEMA)
  .option('-d, --database-url <url>', CAPTURE_DATABASE)
  .option('--json', 'print JSON')
  .action(async (schemaFile: string | undefined, flags: { databaseUrl?: string; json?: boolean }) => {
    const { runCaptureStatus } = await import('./capture-command.js');
    await runCaptureStatus({ schemaFile, ...flags });
  });

const keys = program
  .command('keys')
  .description('Manage the keys that sign the access tokens of accounts (docs/accounts.md).');

keys
  .command('rotate')
  .description('Sign access tokens with a new key from now on; the old keys keep verifying the tokens they signed until those expire.')
  .argument('[schema-file]', TOKEN_SCHEMA)
  .option('-d, --database-url <url>', OPENING_DATABASE)
  .action(async (schemaFile: string | undefined, flags: { databaseUrl?: string }) => {
    const { runKeysRotate } = await import('./keys-command.js');
    await runKeysRotate({ schemaFile, ...flags });
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
  // The command is over once its error is told: exit when what was written is out, whatever may
  // still be open (a database driver's socket, a timer) rather than wait for it.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(1)));
}
