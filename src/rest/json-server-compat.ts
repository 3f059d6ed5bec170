import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConfigError } from '../errors.js';
import type { ListLimits, ListQuery } from '../core/list-query.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { StoredRecord } from '../store/list-spec.js';
import { JSON_CONTENT_TYPE } from '../http/content-negotiation.js';
import { parseJsonServerItem, parseJsonServerList } from './json-server-query.js';
import { listBody, sendList, type ListReader, type RestQueryStyle } from './query-style.js';
import type { VersionTranslator } from './version-translation.js';

/** The compatibility modes `compat` (`--compat`, `RESTGRAPH_COMPAT`) takes. */
/** `none`: restgraph's own query language (the default for a schema; says so for a db.json, where json-server's is the default). */
export const COMPAT_MODES = ['json-server', 'none'] as const;
export type CompatMode = (typeof COMPAT_MODES)[number];

/** `text` as a compat mode. @throws ConfigError naming `option` when restgraph has no such mode */
export function compatMode(option: string, text: string): CompatMode {
  if ((COMPAT_MODES as readonly string[]).includes(text)) return text as CompatMode;
  throw new ConfigError(option, `"${text.slice(0, 40)}" is not a compatibility mode; the modes are: ${COMPAT_MODES.join(', ')}`);
}

/**
 * `--compat json-server`: lists take json-server's query parameters beside restgraph's own
 * (json-server-query.ts), paged lists answer as json-server does (X-Total-Count, a Link header with
 * first/prev/next/last, 1.x's page envelope), DELETE answers 200 `{}`, hasMany relation paths
 * take POST (json-server's nested create), and a create may choose its id. Errors stay problem
 * documents. See docs/json-server.md.
 */
export function jsonServerQueryStyle(schema: SchemaModel, limits: ListLimits): RestQueryStyle {
  return {
    nestedCreate: true,
    chosenIds: true,
    async list(request, reply, raw, reader, tr) {
      const { query, paging } = parseJsonServerList(schema, tr, raw, limits);
      if (paging.kind === 'none') return sendList(request, reply, await reader.page(query), tr, query.include);
      const total = await reader.count(query.filters);
      if (paging.kind === 'slice') {
        const { offset, count } = sliceRange(total, paging.start, paging.end);
        reply.header('x-total-count', String(total));
        return sendRows(reply, await rows(reader, query, offset, Math.min(count, limits.maxLimit)), tr, query.include);
      }
      const pages = Math.max(1, Math.ceil(total / paging.perPage));
      if (paging.kind === 'envelope') {
        // 1.x keeps the page within 1..pages.
        const current = Math.min(paging.page, pages);
        const data = listBody(await rows(reader, query, (current - 1) * paging.perPage, paging.perPage), tr, query.include);
        const envelope = { first: 1, prev: current > 1 ? current - 1 : null, next: current < pages ? current + 1 : null, last: pages, pages, items: total, data };
        return reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(envelope));
      }
      const found = await rows(reader, query, (paging.page - 1) * paging.perPage, paging.perPage);
      reply.header('x-total-count', String(total));
      const links = pageLinks(request, paging.page, paging.perPage, found.length, total);
      if (links !== undefined) reply.header('link', links);
      return sendRows(reply, found, tr, query.include);
    },
    item: (raw, tr) => parseJsonServerItem(schema, tr, raw, limits),
    deleted: (reply) => reply.code(200).type(JSON_CONTENT_TYPE).send('{}'),
  };
}

/** The rows from `offset`, at most `count` of them (none read when there are none to take). */
async function rows(reader: ListReader, query: ListQuery, offset: number, count: number): Promise<StoredRecord[]> {
  if (count <= 0) return [];
  const page = await reader.page({ ...query, offset, limit: count, count: false });
  return page.records;
}

function sendRows(reply: FastifyReply, records: StoredRecord[], tr: VersionTranslator, include: readonly string[]): FastifyReply {
  return reply.type(JSON_CONTENT_TYPE).send(JSON.stringify(listBody(records, tr, include)));
}

/**
 * `Array.prototype.slice(start, end)` over `total` rows, as json-server's `_start`/`_end` work:
 * negative positions count from the end, NaN is 0.
 */
export function sliceRange(total: number, start: number, end: number): { offset: number; count: number } {
  const position = (n: number): number => {
    const whole = Number.isNaN(n) ? 0 : Math.trunc(n);
    return whole < 0 ? Math.max(total + whole, 0) : Math.min(whole, total);
  };
  const from = position(start);
  return { offset: from, count: Math.max(position(end) - from, 0) };
}

/**
 * 0.17's Link header of a page (utils.getPage, then res.links): none for an empty page; prev and next
 * where they exist; first and last unless the page is the whole list. Each link is the request's
 * own URL with its first `page=<current>` replaced, as 0.17 builds it.
 */
function pageLinks(request: FastifyRequest, page: number, perPage: number, shown: number, total: number): string | undefined {
  if (shown === 0) return undefined;
  const url = `${request.protocol}://${request.host}${request.url}`;
  const to = (n: number): string => url.replace(`page=${page}`, `page=${n}`);
  const links: [string, number][] = [];
  const whole = shown === total;
  if (!whole) links.push(['first', 1]);
  if (page > 1) links.push(['prev', page - 1]);
  if (page * perPage < total) links.push(['next', page + 1]);
  if (!whole) links.push(['last', Math.ceil(total / perPage)]);
  return links.length === 0 ? undefined : links.map(([rel, n]) => `<${to(n)}>; rel="${rel}"`).join(', ');
}
