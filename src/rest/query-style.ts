import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidQueryError } from '../errors.js';
import { parseListQuery, type ListLimits, type ListQuery, type RawQuery } from '../core/list-query.js';
import type { ListResult } from '../core/resource-operations.js';
import type { ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import type { VersionTranslator } from './version-translation.js';
import { addLink } from './version-headers.js';

/** What a list route reads through: a resource's list, or a relation's. */
export interface ListReader {
  /** One page of rows. */
  page(query: ListQuery): Promise<ListResult>;
  /** How many rows the filters match (what paging over the whole list needs first). */
  count(filters: ListQuery['filters']): Promise<number>;
}

/** The query parameters of a single-object read. */
export interface ItemQuery {
  readonly include: readonly string[];
  readonly fields?: readonly string[];
}

/**
 * The query language and answer shapes of the REST routes: restgraph's own ({@link NATIVE_QUERY_STYLE}),
 * or json-server's (`--compat json-server`, json-server-compat.ts). Route registration picks one;
 * the routes themselves stay the same.
 */
export interface RestQueryStyle {
  /**
   * Parses a list request of `tr`'s resource, its parameters in `tr`'s version's names, reads it
   * through `reader` and sends the answer. @throws InvalidQueryError
   */
  list(request: FastifyRequest, reply: FastifyReply, raw: RawQuery, reader: ListReader, tr: VersionTranslator): Promise<FastifyReply>;
  /** The query of a single-object read of `tr`'s resource, in `tr`'s version's names. @throws InvalidQueryError */
  item(raw: RawQuery, tr: VersionTranslator): ItemQuery;
  /** The answer to a successful DELETE. */
  deleted(reply: FastifyReply): FastifyReply;
  /** Whether hasMany relation paths take POST, creating a row linked to the parent (json-server's nested routes). */
  readonly nestedCreate: boolean;
  /** Whether a create may choose the new row's id (`"id": 42`, as json-server's front ends may send it). */
  readonly chosenIds: boolean;
}

/** restgraph's own query parameters and answers (docs/list-queries.md). */
export function nativeQueryStyle(limits: ListLimits, schema?: SchemaModel): RestQueryStyle {
  return {
    nestedCreate: false,
    chosenIds: false,
    async list(request, reply, raw, reader, tr) {
      const query = parseListQuery(tr.view.resource, tr.query(raw), limits, [], schema?.resources);
      return sendList(request, reply, await reader.page(query), tr, query.include);
    },
    item: (raw, tr) => parseItemQuery(tr.view.resource, tr.query(raw), limits),
    deleted: (reply) => reply.code(204).send(),
  };
}

/** A page of rows as restgraph answers it: the rows, `Link` rel="next" when more follow, X-Total-Count when counted. */
export function sendList(request: FastifyRequest, reply: FastifyReply, result: ListResult, tr: VersionTranslator, include: readonly string[]): FastifyReply {
  if (result.next !== undefined) addLink(reply, `<${nextPageUrl(request, 'after', result.next)}>; rel="next"`);
  else if (result.nextOffset !== undefined) addLink(reply, `<${nextPageUrl(request, 'offset', String(result.nextOffset))}>; rel="next"`);
  if (result.total !== undefined) reply.header('x-total-count', String(result.total));
  return reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(listBody(result.records, tr, include)));
}

/** Rows as the version shows them, with their embedded relations. */
export function listBody(records: StoredRecord[], tr: VersionTranslator, include: readonly string[]): StoredRecord[] {
  return tr.identity && include.length === 0 ? records : records.map((r) => tr.record(r, include));
}

/**
 * The same request with `after` set to the next cursor (or `offset` to the next page's offset, for
 * lists that page by offset), and not the other: RFC 8288 rel="next".
 */
function nextPageUrl(request: FastifyRequest, parameter: 'after' | 'offset', value: string): string {
  const [path = '/', search = ''] = request.url.split('?', 2);
  const params = new URLSearchParams(search);
  params.delete('after');
  params.delete('offset');
  params.set(parameter, value);
  return `${request.protocol}://${request.host}${path}?${params.toString()}`;
}

/** A read with no query parameters (shared: nothing allocated per request). */
const PLAIN_ITEM_QUERY: ItemQuery = Object.freeze({ include: Object.freeze([]) });

/** `include` and `fields` are the query parameters of a single-object read. */
function parseItemQuery(resource: ResourceModel, raw: RawQuery, limits: ListLimits): ItemQuery {
  if (isEmpty(raw)) return PLAIN_ITEM_QUERY;
  const unknown = Object.keys(raw).filter((k) => k !== 'include' && k !== 'fields');
  if (unknown.length > 0) {
    throw new InvalidQueryError(`A single ${resource.singular} takes only include and fields.`, {
      errors: unknown.map((k) => ({ parameter: k, detail: 'is not a query parameter of a single-object read (it takes include and fields)' })),
    });
  }
  const parsed = parseListQuery(resource, raw, limits);
  return parsed.fields === undefined ? { include: parsed.include } : { include: parsed.include, fields: parsed.fields };
}

/** Whether an object has no own keys, without building the key array (hot path). */
export function isEmpty(object: object): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return false;
  return true;
}
