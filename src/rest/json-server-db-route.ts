import type { FastifyInstance } from 'fastify';
import { canRead } from '../core/access-policy.js';
import type { ListLimits } from '../core/list-query.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import { DataSetTooLargeError, NotFoundError } from '../errors.js';
import type { RateLimitPolicy } from '../schema/rate-limit-policy.js';
import { SINGLETON_ID, type ResourceModel } from '../schema/schema-model.js';
import { resourcesIn, viewOf } from '../schema/version-view.js';
import type { StoredRecord } from '../store/list-spec.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { registerPath } from '../http/path-routes.js';
import { VersionTranslator } from './version-translation.js';

/**
 * json-server's `GET /db` (`--compat json-server`): the whole data set as one object,
 * `{"posts": [...], "comments": [...], "profile": {...}}`, in the version's names. Each resource is
 * read as its list is for the caller: one the caller may not list is left out, and the owner rule
 * keeps to the caller's rows. Collections come in id order, whole: one with more rows than the
 * largest page makes the answer a 400 data-set-too-large (a part of the data set that looks whole
 * is worse than none). A singleton never written is left out. Not served where a resource is
 * itself named `db` (its own path wins). See docs/json-server.md.
 */
export function registerJsonServerDbRoute(app: FastifyInstance, operations: ResourceOperations, limits: ListLimits, prefix: string, version: string): void {
  const schema = operations.schema;
  const resources = resourcesIn(schema, version);
  if (resources.some((r) => r.name === 'db')) return;
  const served = resources.map((resource) => ({ resource, tr: new VersionTranslator(schema, viewOf(schema, resource, version)) }));
  // Reading /db reads every list: each list's quota counts it.
  const quotas = [...new Set(resources.map((r) => r.rateLimits.list).filter((p): p is RateLimitPolicy => p !== undefined))];
  registerPath(
    app,
    `${prefix}/db`,
    {
      GET: async (request, reply) => {
        const ctx = { principal: request.principal, requestId: request.id };
        const data: Record<string, StoredRecord | StoredRecord[]> = {};
        const tooLarge: string[] = [];
        for (const { resource, tr } of served) {
          if (!canRead(ctx.principal, resource)) continue;
          if (resource.singleton) {
            const record = await singleton(operations, ctx, resource);
            if (record !== undefined) data[resource.name] = tr.record(record);
            continue;
          }
          const page = await operations.list(ctx, resource, { filters: [], sort: [{ field: 'id', direction: 'asc' }], limit: limits.maxLimit, include: [], count: false });
          if (page.more) tooLarge.push(resource.name);
          else data[resource.name] = page.records.map((record) => tr.record(record));
        }
        if (tooLarge.length > 0) throw tooLargeError(tooLarge, prefix, limits.maxLimit);
        return reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(data));
      },
    },
    quotas.length === 0 ? {} : { rateLimits: { GET: quotas } },
  );
}

/** A singleton's record, or undefined when it has none yet (or the owner rule hides it). */
async function singleton(operations: ResourceOperations, ctx: Parameters<ResourceOperations['get']>[0], resource: ResourceModel): Promise<StoredRecord | undefined> {
  try {
    return await operations.get(ctx, resource, SINGLETON_ID);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

function tooLargeError(names: readonly string[], prefix: string, maxLimit: number): DataSetTooLargeError {
  const [first = ''] = names;
  const which = names.length === 1 ? `${first} has` : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''} have`;
  return new DataSetTooLargeError(
    `GET ${prefix}/db answers the whole data set or nothing, and ${which} more than ${maxLimit} rows (the largest page, RESTGRAPH_MAX_PAGE_SIZE). ` +
      `Read ${names.length === 1 ? first : 'them'} page by page (GET ${prefix}/${first}?_page=1&_limit=${maxLimit}), or export the database (restgraph export data).`,
  );
}
