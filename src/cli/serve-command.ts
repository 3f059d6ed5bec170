import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { optionsFromEnv } from '../app/options-from-env.js';
import { checkCredentialSettings } from '../auth/credential-settings.js';
import { DestructiveMigrationError, PortUnavailableError } from '../errors.js';
import { loadSchemaFile } from '../schema/load-schema.js';
import { readDbJson } from './db-json-file.js';
import { inferDbJson, publicAccessWarning, startDbJsonDatabase } from './db-json-serve.js';
import { destructiveRefusal } from './destructive-advice.js';
import { handleProcessFaults, logToStderr, type LogNow } from './process-faults.js';
import { chooseSchema, commandLineWith, databaseToCreate } from './schema-and-database.js';
import { compatMode, type CompatMode } from '../rest/json-server-compat.js';

export interface ServeFlags {
  schemaFile?: string | undefined;
  port?: number;
  host?: string;
  databaseUrl?: string;
  /** `--compat <mode>`: over RESTGRAPH_COMPAT. */
  compat?: string;
}

/** How long in-flight requests get to finish after SIGTERM before the process gives up. */
const DRAIN_TIMEOUT_MS = 10_000; // 10 s

/**
 * `restgraph serve`: builds the app from flags over environment, listens, and on SIGTERM or SIGINT
 * stops accepting, drains in-flight requests, closes the database and exits 0. Faults nothing
 * caught are handled as process-faults.ts says (an uncaught exception drains too, then exits 1).
 */
export async function runServe(flags: ServeFlags): Promise<void> {
  let logNow: LogNow = logToStderr;
  // Until the server runs, there is nothing to drain.
  let shutDown = (_reason: string, exitCode: number): void => process.exit(exitCode);
  handleProcessFaults(
    () => logNow,
    (reason, exitCode) => shutDown(reason, exitCode),
  );
  const env = optionsFromEnv(process.env);
  const port = flags.port ?? env.listen.port;
  const host = flags.host ?? env.listen.host;
  const schema = chooseSchema(flags.schemaFile, process.env);
  const database = databaseToCreate(flags.databaseUrl, process.env, schema);
  // A schema with mistakes is told first (buildApp loads it again, from the validator cached now),
  // then credential settings that cannot work (the authenticator checks them again).
  // A json-server database (db.json) is served with the schema inferred from it (db-json-serve.ts).
  const source = readDbJson(schema.path);
  const dbJson = source === undefined ? undefined : inferDbJson(source);
  if (dbJson === undefined) loadSchemaFile(schema.path);
  checkCredentialSettings(env);
  // A db.json is served with json-server's query language, unless --compat or RESTGRAPH_COMPAT says otherwise.
  const compat: { compat?: CompatMode } =
    flags.compat !== undefined ? { compat: compatMode('--compat', flags.compat) } : dbJson !== undefined && env.compat === undefined ? { compat: 'json-server' } : {};
  // Before anything is created (the database, its tables, the first admin key): a port in use
  // fails the start with nothing changed.
  if (port !== 0) await tryListening(port, host);
  // Imported on the first start only; later starts serve the database as it is.
  const dbJsonStart = dbJson === undefined ? undefined : await startDbJsonDatabase(dbJson, database);
  // Loaded once the settings are known to be good: a mistake in them is told in a fraction of a
  // second, not after Fastify, GraphQL and the stores have loaded (0.8 s, most of a failed start).
  const { buildApp } = await import('../app/build-app.js');
  let app: FastifyInstance;
  try {
    const served = dbJsonStart?.schema ?? schema.argument;
    app = await buildApp({ ...env, ...compat, ...(served === undefined ? {} : { schema: served }), databaseUrl: database.url });
  } catch (error) {
    if (error instanceof DestructiveMigrationError) throw destructiveRefusal(schema, database, error);
    throw error;
  }
  logNow = (level, details, message) => app.logNow(level, details, message);
  if (database.notice !== undefined) app.log.warn(database.notice);
  for (const line of dbJsonStart?.lines ?? []) app.log[line.level](line.fields ?? {}, line.level === 'warn' ? `warning: ${line.text}` : line.text);
  const unauthenticated = dbJsonStart === undefined ? undefined : publicAccessWarning(schema.argument ?? schema.path, dbJsonStart.schema);
  if (unauthenticated !== undefined) app.log.warn(`warning: ${unauthenticated}`);
  let address: string;
  try {
    address = await app.listen({ port, host });
  } catch (error) {
    await app.close();
    // Taken between the check and now.
    throw unavailable(error, port, host);
  }
  const { databaseDescription } = app.restgraph;
  // The first admin key (or how to make one) is told before the line that says the server is ready.
  await app.restgraph.adminAccessChecked().catch(() => undefined);
  const resources = [...app.restgraph.schema.resources.keys()];
  // A person at a terminal gets a banner (with the console and docs URLs); machines the JSON line.
  if (!app.restgraph.showStartBanner({ address, database: databaseDescription, resources })) {
    app.log.info({ address, database: databaseDescription, resources, versions: app.restgraph.schema.versions }, `restgraph listening on ${address}`);
  }
  // Out at once, not at the log's next periodic flush (up to a second later): whoever waits for the
  // server, a person or a supervisor, is told it is ready when it is, with the first admin key.
  app.flushLogs(() => undefined);

  let stopping = false;
  shutDown = (reason, exitCode) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal: reason }, 'shutting down: draining in-flight requests');
    app.startDraining();
    const timer = setTimeout(() => {
      app.log.error('drain timed out; exiting');
      app.flushLogs(() => process.exit(1));
    }, DRAIN_TIMEOUT_MS);
    timer.unref();
    app
      .close()
      .then(() => {
        app.log.info('stopped');
        app.flushLogs(() => process.exit(exitCode));
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        app.flushLogs(() => process.exit(1));
      });
  };
  process.once('SIGTERM', () => shutDown('SIGTERM', 0));
  process.once('SIGINT', () => shutDown('SIGINT', 0));
}

/** Listens on the port and lets it go: @throws PortUnavailableError when that fails. */
async function tryListening(port: number, host: string): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(unavailable(error, port, host)));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** The one line a failure to listen gets, with the fix; other errors as they are. */
function unavailable(error: unknown, port: number, host: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const withPort = (other: number): string => commandLineWith(['-p', String(other)], ['-p', '--port']);
  if (code === 'EADDRINUSE') {
    return new PortUnavailableError(`Cannot listen on ${where}: another program uses port ${port}. Choose another port with -p (or PORT), e.g. ${withPort(port === 65535 ? 3000 : port + 1)}`);
  }
  if (code === 'EACCES') {
    return new PortUnavailableError(`Cannot listen on ${where}: this user may not use port ${port} (ports below 1024 need privileges). Choose another port with -p (or PORT), e.g. ${withPort(3000)}`);
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new PortUnavailableError(`Cannot listen on ${where}: ${host} is not an address of this machine. Choose another with -H (or HOST), e.g. ${commandLineWith(['-H', '127.0.0.1'], ['-H', '--host'])}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}
