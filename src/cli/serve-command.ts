import { buildApp } from '../app/build-app.js';
import { optionsFromEnv } from '../app/options-from-env.js';
import { handleProcessFaults, logToStderr, type LogNow } from './process-faults.js';

export interface ServeFlags {
  schemaFile?: string | undefined;
  port?: number;
  host?: string;
  databaseUrl?: string;
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
  const app = await buildApp({
    ...env,
    ...(flags.schemaFile === undefined ? {} : { schema: flags.schemaFile }),
    ...(flags.databaseUrl === undefined ? {} : { databaseUrl: flags.databaseUrl }),
  });
  logNow = (level, details, message) => app.logNow(level, details, message);
  const port = flags.port ?? env.listen.port;
  const host = flags.host ?? env.listen.host;
  const address = await app.listen({ port, host });
  const { schema, databaseDescription } = app.restgraph;
  app.log.info({ address, database: databaseDescription, resources: [...schema.resources.keys()], versions: schema.versions }, `restgraph listening on ${address}`);

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
