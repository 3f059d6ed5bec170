import { buildApp } from '../app/build-app.js';
import { optionsFromEnv } from '../app/options-from-env.js';

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
 * stops accepting, drains in-flight requests, closes the database and exits 0.
 */
export async function runServe(flags: ServeFlags): Promise<void> {
  const env = optionsFromEnv(process.env);
  const app = await buildApp({
    ...env,
    ...(flags.schemaFile === undefined ? {} : { schema: flags.schemaFile }),
    ...(flags.databaseUrl === undefined ? {} : { databaseUrl: flags.databaseUrl }),
  });
  const port = flags.port ?? env.listen.port;
  const host = flags.host ?? env.listen.host;
  const address = await app.listen({ port, host });
  const { schema, databaseDescription } = app.restgraph;
  app.log.info({ address, database: databaseDescription, resources: [...schema.resources.keys()], versions: schema.versions }, `restgraph listening on ${address}`);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
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
        app.flushLogs(() => process.exit(0));
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        app.flushLogs(() => process.exit(1));
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
