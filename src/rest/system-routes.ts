import type { FastifyInstance } from 'fastify';
import { DatabaseUnavailableError, ServiceUnavailableError } from '../errors.js';
import { PACKAGE_VERSION } from '../package-version.js';
import { isAdmin } from '../core/principal.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { SqlDatabase } from '../store/sql-database.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../http/problem-details.js';

/** `/` (what is served, by which restgraph on which database), `/healthz` (the process is alive) and `/readyz` (the database answers, and can write when writes were failing). */
export function registerSystemRoutes(app: FastifyInstance, schema: SchemaModel, db: SqlDatabase, isDraining: () => boolean): void {
  const served = {
    name: 'restgraph',
    versions: schema.versions,
    latestVersion: schema.latestVersion,
    resources: Object.fromEntries([...schema.resources.keys()].map((name) => [name, `/${name}`])),
  };
  const index = JSON.stringify(served);
  // Which restgraph on which database is told to admins only: a version helps an attacker pick
  // what to try.
  const adminIndex = JSON.stringify({ ...served, server: { version: PACKAGE_VERSION, database: db.rules.product } });
  registerPath(app, '/', { GET: async (request, reply) => reply.type(JSON_CONTENT_TYPE).send(isAdmin(request.principal) ? adminIndex : index) });
  // Probes are not counted against rate limits: a busy client must not make its host look dead.
  const probe = { config: { rateLimitExempt: true } };
  registerPath(app, '/healthz', { GET: async (_request, reply) => reply.type(JSON_CONTENT_TYPE).send('{"status":"ok"}') }, probe);
  registerPath(app, '/readyz', {
    GET: async (_request, reply) => {
      if (isDraining()) throw new ServiceUnavailableError('The server is shutting down.', { headers: { 'retry-after': '1' } });
      try {
        await db.ping();
      } catch (error) {
        throw new DatabaseUnavailableError('The database does not answer, or cannot write.', { cause: error, headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } });
      }
      return reply.type(JSON_CONTENT_TYPE).send('{"status":"ready"}');
    },
  }, probe);
}
