import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ListLimits, ListQuery, RawQuery } from '../core/list-query.js';
import { AGGREGATE_PARAMETERS, parseAggregateQuery, type AggregateGroup } from '../core/aggregate-query.js';
import type { ListResult, ResourceOperations } from '../core/resource-operations.js';
import type { OperationContext } from '../core/principal.js';
import { resourceNamed, SINGLETON_ID, type ResourceModel } from '../schema/schema-model.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { StoredRecord } from '../store/list-spec.js';
import { assertIfMatch, entityTag, noneMatch } from '../http/conditional-requests.js';
import { assertHasBody, assertPlainJsonBody, JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { runIdempotent, type PreparedResponse } from './idempotent-request.js';
import { registerPath, type RouteHandler } from '../http/path-routes.js';
import { recordIdReader, recordPath } from './record-paths.js';
import { keyFields, type RecordId } from '../schema/record-key.js';
import { VersionTranslator } from './version-translation.js';
import { deprecationHeaders } from './version-headers.js';
import type { ItemQuery, ListReader, RestQueryStyle } from './query-style.js';
import { viewOf } from '../schema/version-view.js';
import { isPromise } from '../promise-or-value.js';
import type { FileStorage } from '../core/file-storage.js';
import type { RateLimits } from '../core/rate-limits.js';
import { quotas } from './resource-quotas.js';
import { multipartTarget, writeMultipart } from './multipart-writes.js';
import { MULTIPART_ROUTE } from '../http/multipart-bodies.js';

export interface ResourceRoutesOptions {
  operations: ResourceOperations;
  idempotency: IdempotencyStore;
  /** The query language and answer shapes: restgraph's own, or json-server's (`--compat json-server`). */
  queryStyle: RestQueryStyle;
  /** Page and group limits (aggregates read them; lists read them through the query style). */
  listLimits: ListLimits;
  /** File storage, when file fields are served: POST, PATCH and PUT then also read multipart/form-data (docs/files.md#multipart-forms). */
  files?: FileStorage;
  /** The quotas in force: multipart files count their bytes against the credential's upload budget. */
  rateLimits?: RateLimits | undefined;
}

/**
 * The REST adapter of one resource under one prefix (`''` for the latest version, `/v1`, …):
 * collection, item and relation paths, each a thin translation between HTTP and the core operations.
 */
export function registerResourceRoutes(app: FastifyInstance, options: ResourceRoutesOptions, resource: ResourceModel, prefix: string, version: string): void {
  const { operations, idempotency, queryStyle } = options;
  const schema = operations.schema;
  // json-server's front ends may choose a new row's id.
  const creates = queryStyle.chosenIds ? { acceptId: true } : {};
  const base = `${prefix}/${resource.name}`;
  const itemPath = (record: StoredRecord): string => recordPath(resource, base, record);
  const idOfPath = recordIdReader(resource, base);
  const readOnly = resource.mapping?.readOnly === true;
  // This version's names and fields; storage has every field under its latest name.
  const tr = new VersionTranslator(schema, viewOf(schema, resource, version));
  const multipart = options.files === undefined ? undefined : multipartTarget({ operations, storage: options.files, rateLimits: options.rateLimits, resource, tr, creates });
  const lifeCycle = prefix === '' ? undefined : deprecationHeaders(schema, version);
  const handler = (fn: RouteHandler): RouteHandler => {
    if (tr.identity && lifeCycle === undefined) return fn;
    return async (request, reply) => {
      if (lifeCycle !== undefined) lifeCycle(request, reply);
      try {
        return await fn(request, reply);
      } catch (error) {
        throw tr.error(error);
      }
    };
  };

  /** One row, as `view`'s version shows it, only `fields` (and the embedded `include`) when given. */
  const sendRecord = (request: FastifyRequest, reply: FastifyReply, stored: StoredRecord, query: ItemQuery, view = tr): FastifyReply => {
    const { include, fields } = query;
    const body = JSON.stringify(view.record(fields === undefined ? stored : pick(stored, [...fields, ...include]), include));
    const tag = entityTag(body);
    reply.header('etag', tag);
    if (!noneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();
    return reply.type(JSON_CONTENT_TYPE).send(body);
  };

  /** The representation of a row a write answers with, and its entity tag. */
  const represent = (record: StoredRecord): { body: string; tag: string } => {
    const body = JSON.stringify(tr.record(record));
    return { body, tag: entityTag(body) };
  };

  const prepared = (status: number, record: StoredRecord, extra: Record<string, string> = {}): PreparedResponse => {
    const { body, tag } = represent(record);
    return { status, headers: { 'content-type': JSON_CONTENT_TYPE, etag: tag, ...extra }, body };
  };

  const ifMatch = (request: FastifyRequest) => {
    const header = request.headers['if-match'];
    if (header === undefined) return undefined;
    return (current: StoredRecord) => assertIfMatch(header, represent(current).tag);
  };

  // A replace through a version that lacks some fields leaves them as they are.
  const keep = tr.view.hidden.length === 0 ? {} : { keep: tr.view.hidden };
  /** GET, PUT, PATCH and DELETE of one row, whose id `idOf` reads from the request. */
  const itemMethods = (idOf: (request: FastifyRequest) => RecordId): Record<'GET' | 'PUT' | 'PATCH' | 'DELETE', RouteHandler> => ({
    // Synchronous when the read is (SQLite): the response goes out without a promise in between.
    GET: handler((request, reply) => {
      const id = idOf(request);
      const query = queryStyle.item(request.query as RawQuery, tr);
      const found = operations.get(context(request), resource, id, query.include);
      if (isPromise(found)) return found.then((record) => void sendRecord(request, reply, record, query));
      sendRecord(request, reply, found, query);
      return undefined;
    }),
    PUT: handler(async (request, reply) => {
      const id = idOf(request);
      const precondition = ifMatch(request);
      if (multipart !== undefined && request.isMultipart()) return sendPrepared(reply, prepared(200, await writeMultipart(request, reply, multipart, 'replace', id, precondition)));
      assertPlainJsonBody(request);
      const body = tr.body(request.body, (translated) => operations.check(context(request), resource, 'replace', translated, id));
      const record = await operations.replace(context(request), resource, id, body, precondition === undefined ? keep : { ...keep, precondition });
      const response = prepared(200, record);
      return reply.code(200).headers(response.headers).send(response.body);
    }),
    PATCH: handler(async (request, reply) => {
      assertHasBody(request);
      const id = idOf(request);
      const precondition = ifMatch(request);
      if (multipart !== undefined && request.isMultipart()) return sendPrepared(reply, prepared(200, await writeMultipart(request, reply, multipart, 'update', id, precondition)));
      return runIdempotent(request, reply, idempotency, async (commit) => {
        let response: PreparedResponse | undefined;
        const patch = tr.body(request.body, (translated) => operations.check(context(request), resource, 'update', translated, id));
        const record = await operations.update(context(request), resource, id, patch, {
          ...(precondition === undefined ? {} : { precondition }),
          beforeCommit: async (tx, updated) => {
            if (updated === undefined || commit === undefined) return;
            response = prepared(200, updated);
            await commit(tx, response);
          },
        });
        return response ?? prepared(200, record);
      });
    }),
    DELETE: handler(async (request, reply) => {
      const id = idOf(request);
      const precondition = ifMatch(request);
      await operations.delete(context(request), resource, id, precondition === undefined ? {} : { precondition });
      return queryStyle.deleted(reply);
    }),
  });

  if (resource.singleton) {
    // One record at the resource's own path: no list, create or delete.
    const { GET, PUT, PATCH } = itemMethods(() => SINGLETON_ID);
    registerPath(app, base, { GET, PUT, PATCH }, { ...quotas(resource, { GET: 'get', PUT: 'replace', PATCH: 'update' }), ...(multipart === undefined ? {} : { config: MULTIPART_ROUTE }) });
    return;
  }

  const list = handler(async (request, reply) => {
    const reader: ListReader = {
      page: (query) => operations.list(context(request), resource, query),
      count: (filters) => operations.count(context(request), resource, filters),
    };
    return queryStyle.list(request, reply, request.query as RawQuery, reader, tr);
  });
  if (readOnly) {
    // A view, or a table served read-only: lists and rows, no writes (405 with Allow).
    registerPath(app, base, { GET: list }, quotas(resource, { GET: 'list' }));
    registerPath(app, `${base}/:id`, { GET: itemMethods(idOfPath).GET }, quotas(resource, { GET: 'get' }));
    registerRelationRoutes();
    return;
  }
  registerPath(app, base, {
    GET: list,
    POST: handler(async (request, reply) => {
      if (multipart !== undefined && request.isMultipart()) {
        const record = await writeMultipart(request, reply, multipart, 'create', undefined, undefined);
        return sendPrepared(reply, prepared(201, record, { location: itemPath(record) }));
      }
      assertPlainJsonBody(request);
      return runIdempotent(request, reply, idempotency, async (commit) => {
        let response: PreparedResponse | undefined;
        // Without an Idempotency-Key nothing commits with the row (so it may take one statement).
        const record = await operations.create(
          context(request),
          resource,
          tr.body(request.body, (body) => operations.check(context(request), resource, 'create', body, undefined, creates)),
          commit === undefined
            ? creates
            : {
                ...creates,
                beforeCommit: async (tx, created) => {
                  if (created === undefined) return;
                  response = prepared(201, created, { location: itemPath(created) });
                  await commit(tx, response);
                },
              },
        );
        return response ?? prepared(201, record, { location: itemPath(record) });
      });
    }),
  }, { ...quotas(resource, { GET: 'list', POST: 'create' }), ...(multipart === undefined ? {} : { config: MULTIPART_ROUTE }) });

  // A fixed segment: ids are positive integers, so no row's path is /<resource>/aggregate (and
  // the router tries fixed segments before parameters, whatever the order they were added in).
  registerPath(app, `${base}/aggregate`, {
    GET: handler(async (request, reply) => {
      const raw = request.query as RawQuery;
      // fromEntries makes own properties of every key, __proto__ too (an assignment would not).
      const entries = Object.entries(raw);
      const own = Object.fromEntries(entries.filter(([key]) => AGGREGATE_PARAMETERS.includes(key)));
      const filters = Object.fromEntries(entries.filter(([key]) => !AGGREGATE_PARAMETERS.includes(key)));
      const query = parseAggregateQuery(resource, { ...tr.query(filters), ...own }, options.listLimits, tr.identity ? undefined : (name) => tr.field(name), schema.resources);
      const groups = await operations.aggregate(context(request), resource, query);
      return reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(tr.identity ? groups : groups.map((g) => inVersion(g, tr))));
    }),
  }, quotas(resource, { GET: 'list' }));

  registerPath(app, `${base}/:id`, itemMethods(idOfPath), {
    ...quotas(resource, { GET: 'get', PUT: 'replace', PATCH: 'update', DELETE: 'delete' }),
    ...(multipart === undefined ? {} : { config: MULTIPART_ROUTE }),
  });
  registerRelationRoutes();

  function registerRelationRoutes(): void {
  for (const relation of tr.view.relations.values()) {
    const target = resourceNamed(schema, relation.target);
    const targetTr = new VersionTranslator(schema, viewOf(schema, target, version));
    // A relation path reads the other resource: its list (hasMany) or get (belongsTo) quota applies.
    const relationQuotas = quotas(target, { GET: relation.kind === 'hasMany' ? 'list' : 'get' });
    const relationPath = `${base}/:id/${relation.name}`;
    const GET = handler(async (request, reply) => {
      const id = idOfPath(request);
      const raw = request.query as RawQuery;
      if (relation.kind === 'hasMany') {
        const page = async (query: ListQuery): Promise<ListResult> => {
          const result = await operations.related(context(request), resource, id, relation, query);
          if (result.kind !== 'many') throw new Error(`relation ${relation.name} read one row`);
          return result.page;
        };
        // Counting goes through the relation too: a parent that does not exist is a 404 either way.
        const count = async (filters: ListQuery['filters']): Promise<number> =>
          (await page({ filters, sort: keyFields(target).map((field) => ({ field, direction: 'asc' as const })), limit: 1, include: [], count: true })).total ?? 0;
        const reader: ListReader = { page, count };
        return queryStyle.list(request, reply, raw, reader, targetTr);
      }
      const query = queryStyle.item(raw, targetTr);
      const result = await operations.related(context(request), resource, id, relation, { filters: [], sort: [], limit: 1, count: false, ...query });
      if (result.kind !== 'one') throw new Error(`relation ${relation.name} read a list`);
      return sendRecord(request, reply, result.record, query, targetTr);
    });
    if (!queryStyle.nestedCreate || relation.kind !== 'hasMany') {
      registerPath(app, relationPath, { GET }, relationQuotas);
      continue;
    }
    // json-server's nested create: POST /posts/1/comments creates a comment whose postId is 1.
    registerPath(app, relationPath, {
      GET,
      POST: handler(async (request, reply) => {
        assertPlainJsonBody(request);
        const id = idOfPath(request);
        const body = { ...(request.body as Record<string, unknown>), [relation.foreignKey]: id };
        const record = await operations.create(
          context(request),
          target,
          targetTr.body(body, (translated) => operations.check(context(request), target, 'create', translated, undefined, creates)),
          creates,
        );
        const text = JSON.stringify(targetTr.record(record));
        return reply.code(201).header('location', `${prefix}/${target.name}/${String(record.id)}`).header('etag', entityTag(text)).type(JSON_CONTENT_TYPE).send(text);
      }),
    }, { rateLimits: { ...relationQuotas.rateLimits, ...quotas(target, { POST: 'create' }).rateLimits } });
  }
  }
}

/** A group with the names `tr`'s version uses (group terms and measured fields). */
function inVersion(group: AggregateGroup, tr: VersionTranslator): Record<string, unknown> {
  const rename = (values: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(values).map(([term, value]) => {
      const [name = '', unit] = term.split(':');
      const apiName = tr.view.apiNameOf.get(name) ?? name;
      return [unit === undefined ? apiName : `${apiName}:${unit}`, value];
    }));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(group)) out[key] = typeof value === 'object' && value !== null ? rename(value as Record<string, unknown>) : value;
  return out;
}

function pick(record: StoredRecord, names: readonly string[]): StoredRecord {
  const out: StoredRecord = {};
  for (const name of names) out[name] = record[name];
  return out;
}

function sendPrepared(reply: FastifyReply, response: PreparedResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).send(response.body);
}

function context(request: FastifyRequest): OperationContext {
  return { principal: request.principal, requestId: request.id };
}
