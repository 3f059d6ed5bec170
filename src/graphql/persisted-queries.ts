import { createHash } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { parseRequestParams, type Request, type RequestParams } from 'graphql-http';
import { LRUCache } from 'lru-cache';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Longest query kept as an automatic persisted query (characters); a longer one runs, and is not kept. */
export const MAX_PERSISTED_QUERY_LENGTH = 65_536;

/** How much a cache holds: entries, and their size in bytes as counted against its bound. */
export interface CacheUse {
  entries: number;
  bytes: number;
}

/** What a request carries from reading its parameters to the end of its checks. */
export interface PersistedQueryContext {
  /** An automatic persisted query to remember once its document has passed every check. */
  toPersist?: { hash: string; query: string };
}

/**
 * Automatic persisted queries (Apollo's protocol), kept by their SHA-256 as long as they fit in
 * `maxBytes` (least recently used go first).
 */
export class PersistedQueries {
  readonly #kept: LRUCache<string, string>;

  constructor(maxBytes: number) {
    // Strings count two bytes a character (V8 keeps some in one).
    this.#kept = new LRUCache({ maxSize: maxBytes, sizeCalculation: (query, hash) => 2 * (query.length + hash.length) + 64 });
  }

  /**
   * graphql-http's parameter reader, for requests with `extensions.persistedQuery`, whose
   * `sha256Hash` names a query. With the query, the pair is checked and remembered; without it, a known hash stands
   * for its query and an unknown one answers PersistedQueryNotFound (the client then sends both).
   * A query is noted in the request's context, and remembered only once it has passed every check
   * ({@link remember}), and only up to MAX_PERSISTED_QUERY_LENGTH characters.
   */
  async parseRequestParams(req: Request<unknown, PersistedQueryContext>): Promise<RequestParams | undefined> {
    // Most requests carry no persisted query: leave them to the standard parser, unread. So are
    // POSTs that are not JSON: the standard parser refuses them (415), persisted or not.
    const text = req.method === 'GET' ? req.url : typeof req.body === 'string' && isJsonPost(req) ? req.body : '';
    if (!text.includes('persistedQuery')) return undefined;
    const raw = rawParams(req);
    const persisted = raw?.extensions?.persistedQuery;
    if (raw === undefined || persisted === undefined) return undefined; // the standard parser decides
    const hash = isObject(persisted) ? persisted.sha256Hash : undefined;
    if (!isObject(persisted) || persisted.version !== 1 || typeof hash !== 'string' || !SHA256_HEX.test(hash)) {
      throw requestError('extensions.persistedQuery must be {"version": 1, "sha256Hash": "<64 lowercase hex digits>"}.', 'bad-request');
    }
    if (typeof raw.query === 'string') {
      if (createHash('sha256').update(raw.query).digest('hex') !== hash) {
        throw requestError('provided sha does not match query: extensions.persistedQuery.sha256Hash must be the SHA-256 of the query text.', 'bad-request');
      }
      const params = await parseRequestParams(req);
      if (!Array.isArray(params) && raw.query.length <= MAX_PERSISTED_QUERY_LENGTH) req.context.toPersist = { hash, query: raw.query };
      return params as RequestParams;
    }
    const query = this.#kept.get(hash);
    if (query === undefined) {
      throw new GraphQLError('PersistedQueryNotFound', { extensions: { code: 'persisted-query-not-found', status: 400 } });
    }
    const params: RequestParams = { query };
    if (raw.operationName !== undefined && raw.operationName !== null) {
      if (typeof raw.operationName !== 'string') throw requestError('operationName must be a string.', 'bad-request');
      params.operationName = raw.operationName;
    }
    if (raw.variables !== undefined && raw.variables !== null) {
      if (!isObject(raw.variables)) throw requestError('variables must be an object.', 'bad-request');
      params.variables = raw.variables;
    }
    params.extensions = raw.extensions ?? {};
    return params;
  }

  /** Keeps the query the request sent with its hash, if any: call once it has passed every check. */
  remember(context: PersistedQueryContext): void {
    if (context.toPersist !== undefined) this.#kept.set(context.toPersist.hash, context.toPersist.query);
  }

  get use(): CacheUse {
    return { entries: this.#kept.size, bytes: this.#kept.calculatedSize };
  }
}

/** A GraphQL error refusing the request itself (HTTP 400 in REST terms). */
export function requestError(message: string, code: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, status: 400 } });
}

interface RawParams {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: Record<string, unknown>;
}

/** The request's parameters before checking, when they can be read at all (else the standard parser reports). */
function rawParams(req: Request<unknown, PersistedQueryContext>): RawParams | undefined {
  try {
    if (req.method === 'GET') {
      const search = new URLSearchParams(req.url.split('?')[1] ?? '');
      const json = (name: string): unknown => {
        const value = search.get(name);
        return value === null ? undefined : (JSON.parse(value) as unknown);
      };
      const extensions = json('extensions');
      return {
        query: search.get('query') ?? undefined,
        operationName: search.get('operationName') ?? undefined,
        variables: json('variables'),
        ...(isObject(extensions) ? { extensions } : {}),
      };
    }
    const body = typeof req.body === 'string' ? (JSON.parse(req.body) as unknown) : req.body;
    if (!isObject(body)) return undefined;
    return { query: body.query, operationName: body.operationName, variables: body.variables, ...(isObject(body.extensions) ? { extensions: body.extensions } : {}) };
  } catch {
    return undefined;
  }
}

/** A POST graphql-http reads: `Content-Type: application/json` (UTF-8, the default). */
function isJsonPost(req: Request<unknown, PersistedQueryContext>): boolean {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  const contentType = headers['content-type'];
  if (typeof contentType !== 'string') return false;
  const [mediaType, charset = 'charset=utf-8'] = contentType.replace(/\s/g, '').toLowerCase().split(';');
  return req.method === 'POST' && mediaType === 'application/json' && charset === 'charset=utf-8';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
