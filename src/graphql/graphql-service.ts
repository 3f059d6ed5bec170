import * as crypto from 'node:crypto';
import {
  GraphQLError,
  NoFragmentCyclesRule,
  NoSchemaIntrospectionCustomRule,
  OperationTypeNode,
  getOperationAST,
  getVariableValues,
  parse,
  printSchema,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { createHandler, parseRequestParams, type Handler, type OperationArgs, type Request, type RequestParams } from 'graphql-http';
import type { ListLimits } from '../core/list-query.js';
import type { OperationContext, ResourceOperations } from '../core/resource-operations.js';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import { RateLimitedError, RestgraphError } from '../errors.js';
import type { RateLimits } from '../core/rate-limits.js';
import { charge, withCharge, type GraphqlCharge } from './graphql-charge.js';
import { toRestgraphError } from '../rest/problem-details.js';
import { TransientStoreError } from '../store/store-errors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { RequestLoaders, type GraphqlContext } from './graphql-context.js';
import { buildGraphqlSchema } from './graphql-schema.js';
import { MAX_FIELD_PAIRS, limitError, maxNestingOf, measureDocument, operationCost, shapeProblems, type GraphqlLimits, type MeasuredDocument } from './query-limits.js';
import type { PromiseOrValue } from '../promise-or-value.js';
import { scanDocument } from './document-scan.js';
import { MAX_JSON_DEPTH } from '../core/json-input-rules.js';
import { literalValuesProblem, variablesProblem } from './input-values.js';
import { CompiledExecution } from './compiled-execution.js';
import { fieldPairs } from './field-pairs.js';

/** A parsed, measured and validated document, kept so a repeated query skips those steps. */
interface PreparedDocument {
  document: DocumentNode;
  measured: MeasuredDocument;
  /** What it holds in memory, roughly: its syntax tree (which keeps the query text) and what is derived from it. */
  bytes: number;
}

/**
 * Bytes a parsed document holds per token of its query, measured on the heap (graphql-js's syntax
 * tree with locations and the token list, and graphql-jit's compiled operation): 200 to 450.
 */
const BYTES_PER_TOKEN = 512;

/** What the HTTP adapter hands over with each request. */
export interface GraphqlRequestContext {
  operation: OperationContext;
  /** Set when the operation was charged against the GraphQL budget (for the RateLimit headers). */
  charge?: GraphqlCharge;
  /** Set when the executed operation's result has errors (its response is then not cacheable). */
  hadErrors?: boolean;
  /** An automatic persisted query to remember once its document has passed every check. */
  toPersist?: { hash: string; query: string };
}

export interface GraphqlServiceOptions {
  limits: GraphqlLimits;
  listLimits: ListLimits;
  /** The event path subscriptions read from. */
  events?: EventDispatcher;
  /** Logs an error no one foresaw (the client sees only "internal"). */
  logUnexpected: (error: unknown, requestId: string | undefined) => void;
  /** Memory the parsed documents kept may take (least recently used go first). @default 32 MiB */
  documentCacheBytes?: number;
  /** Memory the automatic persisted queries kept may take (least recently used go first). @default 16 MiB */
  persistedQueryCacheBytes?: number;
  /** Charges each operation its cost against the GraphQL budget, when one is set. */
  rateLimits?: RateLimits;
}


const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Longest query kept as an automatic persisted query (characters); a longer one runs, and is not kept. */
export const MAX_PERSISTED_QUERY_LENGTH = 65_536;

/** How much a cache holds: entries, and their size in bytes as counted against its bound. */
export interface CacheUse {
  entries: number;
  bytes: number;
}

export type PreparedArgs = OperationArgs<GraphqlContext> & { contextValue: GraphqlContext };

/**
 * The GraphQL endpoint's engine, apart from HTTP: the generated schema, GraphQL-over-HTTP request
 * handling (graphql-http, which follows the specification), automatic persisted queries, the
 * protection limits checked before execution, and error formatting onto restgraph's error codes.
 */
export class GraphqlService {
  readonly schema: GraphQLSchema;
  readonly sdl: string;
  readonly handle: Handler<unknown, GraphqlRequestContext>;
  readonly #operations: ResourceOperations;
  readonly #options: GraphqlServiceOptions;
  readonly #rules: readonly ValidationRule[];
  /** Prepared documents by the SHA-256 of their query. */
  readonly #documents: LRUCache<string, PreparedDocument>;
  /** Automatic persisted queries by their SHA-256. */
  readonly #persisted: LRUCache<string, string>;
  /** GraphQL type names of resources: what the cost counts (not connections, edges, page info). */
  readonly #resourceTypes: ReadonlySet<string>;
  readonly #executor = new CompiledExecution();

  constructor(model: SchemaModel, operations: ResourceOperations, options: GraphqlServiceOptions) {
    this.schema = buildGraphqlSchema(model, options.listLimits);
    this.sdl = `${printSchema(this.schema)}\n`;
    this.#operations = operations;
    this.#options = options;
    this.#resourceTypes = new Set([...model.resources.values()].map((r) => r.typeName));
    this.#rules = options.limits.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
    this.#documents = new LRUCache({ maxSize: options.documentCacheBytes ?? 32 * 1024 * 1024, sizeCalculation: (prepared) => prepared.bytes });
    // Strings count two bytes a character (V8 keeps some in one).
    this.#persisted = new LRUCache({ maxSize: options.persistedQueryCacheBytes ?? 16 * 1024 * 1024, sizeCalculation: (query, hash) => 2 * (query.length + hash.length) + 64 });
    this.handle = createHandler<unknown, GraphqlRequestContext, GraphqlContext>({
      schema: this.schema,
      parseRequestParams: (req) => this.#parseRequestParams(req),
      onSubscribe: async (req, params) => {
        const prepared = await this.prepare(params, req.context.operation);
        if (!Array.isArray(prepared)) {
          // Kept only now that it has passed every check, so the hash alone can stand for it.
          const { toPersist } = req.context;
          if (toPersist !== undefined) this.#persisted.set(toPersist.hash, toPersist.query);
          const charge = (prepared as OperationArgs<GraphqlContext>).contextValue?.charge;
          if (charge !== undefined) req.context.charge = charge;
          return prepared;
        }
        // Over HTTP a used-up budget is a 429 with Retry-After, not a 200 with errors.
        const errors = prepared as readonly GraphQLError[];
        const limited = errors.find((e) => e.extensions.code === 'rate-limited');
        if (limited !== undefined) {
          const state = limited.extensions.rateLimit as GraphqlCharge;
          throw new RateLimitedError(limited.message, {
            headers: {
              'retry-after': String(limited.extensions.retryAfter),
              'ratelimit-policy': `"graphql";q=${state.limit};w=${state.windowSeconds}`,
              'ratelimit': `"graphql";r=${state.remaining};t=${state.resetSeconds}`,
            },
          });
        }
        return errors;
      },
      execute: (args) => this.#executor.execute(args),
      onOperation: (req, args, result) => {
        if (result.errors !== undefined && result.errors.length > 0) req.context.hadErrors = true;
        return withCharge(result, args.contextValue);
      },
      formatError: (error) => this.#formatError(error),
    });
  }

  /**
   * Automatic persisted queries (Apollo's protocol): `extensions.persistedQuery.sha256Hash` names
   * a query. With the query, the pair is checked and remembered; without it, a known hash stands
   * for its query and an unknown one answers PersistedQueryNotFound (the client then sends both).
   * A query is remembered only once it has passed every check (see onSubscribe), and only up to
   * MAX_PERSISTED_QUERY_LENGTH characters.
   */
  async #parseRequestParams(req: Request<unknown, GraphqlRequestContext>): Promise<RequestParams | undefined> {
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
      if (crypto.createHash('sha256').update(raw.query).digest('hex') !== hash) {
        throw requestError('provided sha does not match query: extensions.persistedQuery.sha256Hash must be the SHA-256 of the query text.', 'bad-request');
      }
      const params = await parseRequestParams(req);
      if (!Array.isArray(params) && raw.query.length <= MAX_PERSISTED_QUERY_LENGTH) req.context.toPersist = { hash, query: raw.query };
      return params as RequestParams;
    }
    const query = this.#persisted.get(hash);
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

  /**
   * The execution arguments of a request, or its errors. Every transport uses it (HTTP, persisted
   * queries, WebSocket, SSE). First the document (cached by the SHA-256 of its text): scanned
   * (tokens and nesting, before parsing), parsed, its literals checked, measured (depth, aliases,
   * directives, expanded selections: linear in its size, before anything that is not), validated.
   * Then per request: the operation, the variables, the cost and the GraphQL budget.
   */
  prepare(params: RequestParams, ctx: OperationContext): PromiseOrValue<OperationArgs<GraphqlContext> | readonly GraphQLError[]> {
    const { listLimits } = this.#options;
    const prepared = this.#prepareDocument(params.query);
    if ('errors' in prepared) return prepared.errors;
    const { document, measured } = prepared;
    const operation = getOperationAST(document, params.operationName);
    if (operation === null || operation === undefined) {
      const message = params.operationName === undefined ? 'The document has several operations; say which with operationName.' : `The document has no operation named ${params.operationName}.`;
      return [new GraphQLError(message, { extensions: { code: 'graphql-validation', status: 400 } })];
    }
    if (params.variables !== undefined && params.variables !== null) {
      const problem = variablesProblem(params.variables);
      if (problem !== undefined) return [problem];
    }
    const { maxCost } = this.#options.limits;
    const cost = operationCost(this.schema, measured, operation, params.variables, listLimits.defaultLimit, this.#resourceTypes);
    if (cost > maxCost) {
      return [
        limitError({
          limit: 'maxCost',
          actual: cost,
          max: maxCost,
          message: `The query may return ${cost} objects; at most ${maxCost} are allowed (a list field counts its first/last, or ${listLimits.defaultLimit} without). Ask for smaller pages.`,
        }),
      ];
    }
    if ((operation.variableDefinitions?.length ?? 0) > 0 || params.variables !== undefined) {
      const coerced = getVariableValues(this.schema, operation.variableDefinitions ?? [], params.variables ?? {});
      if (coerced.errors !== undefined) return coerced.errors.map((e) => withCode(e, 'graphql-validation'));
    }
    const args = this.#args(document, params, ctx, operation.operation);
    // Charged last: a request refused for any other reason costs nothing.
    const charged = this.#options.rateLimits?.chargeGraphql(ctx.principal, ctx.clientAddress, Math.max(1, cost));
    if (charged === undefined) return args;
    if (charged instanceof Promise) return charged.then((result) => charge(args, result, cost));
    return charge(args, charged, cost);
  }

  /** The cached document of a query, or prepared now; or why it is refused. */
  #prepareDocument(query: string): PreparedDocument | { errors: readonly GraphQLError[] } {
    const key = documentKey(query);
    const cached = this.#documents.get(key);
    if (cached !== undefined) return cached;
    const { limits } = this.#options;
    const maxNesting = maxNestingOf(limits);
    // Nothing here takes more than linear time until the limits have passed: validation and
    // graphql-jit's compilation would otherwise meet whatever the document holds.
    const scan = scanDocument(query, limits.maxTokens, maxNesting);
    if (scan.over === 'maxTokens') return { errors: [documentLimitError('maxTokens', limits.maxTokens, `The query has more than ${limits.maxTokens} tokens (names, values, punctuation); at most ${limits.maxTokens} are allowed.`)] };
    if (scan.over === 'maxNesting') {
      return { errors: [documentLimitError('maxNesting', maxNesting, `The query nests brackets ({}, [], ()) more than ${maxNesting} levels deep: fields may nest ${limits.maxDepth} levels and values ${MAX_JSON_DEPTH}.`)] };
    }
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: limits.maxTokens });
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      return { errors: [withCode(error, 'graphql-syntax')] };
    }
    const literal = literalValuesProblem(document);
    if (literal !== undefined) return { errors: [literal] };
    const measured = measureDocument(document);
    const problems = shapeProblems(measured.shape, limits);
    if (problems.length > 0) return { errors: problems.map(limitError) };
    // The field pairs are counted through fragments: a cycle would not end (its own rule is linear).
    if (measured.cyclic) return { errors: validate(this.schema, document, [NoFragmentCyclesRule]).map((e) => withCode(e, 'graphql-validation')) };
    const pairs = fieldPairs(document, measured);
    if (pairs > MAX_FIELD_PAIRS) {
      return {
        errors: [
          limitError({
            limit: 'maxFieldPairs',
            actual: pairs,
            max: MAX_FIELD_PAIRS,
            message: `The query has ${pairs} pairs of fields with one name at one place (as in "{ name name }"), each of which validation compares; at most ${MAX_FIELD_PAIRS} are allowed. Select each field once.`,
          }),
        ],
      };
    }
    const errors = validate(this.schema, document, this.#rules);
    if (errors.length > 0) return { errors: errors.map((e) => withCode(e, 'graphql-validation')) };
    const prepared: PreparedDocument = { document, measured, bytes: BYTES_PER_TOKEN * scan.tokens + 2 * query.length + 1024 };
    this.#executor.admit(document);
    this.#documents.set(key, prepared);
    return prepared;
  }

  /** What the document and persisted-query caches hold now. */
  get cacheUse(): { documents: CacheUse; persistedQueries: CacheUse } {
    return {
      documents: { entries: this.#documents.size, bytes: this.#documents.calculatedSize },
      persistedQueries: { entries: this.#persisted.size, bytes: this.#persisted.calculatedSize },
    };
  }

  #args(document: DocumentNode, params: RequestParams, ctx: OperationContext, kind: OperationTypeNode): PreparedArgs {
    return {
      schema: this.schema,
      document,
      ...(params.operationName === undefined ? {} : { operationName: params.operationName }),
      ...(params.variables === undefined ? {} : { variableValues: params.variables }),
      contextValue: {
        operations: this.#operations,
        operation: ctx,
        loaders: new RequestLoaders(this.#operations, ctx, { cache: kind !== OperationTypeNode.SUBSCRIPTION }),
        ...(this.#options.events === undefined ? {} : { events: this.#options.events }),
      },
    };
  }

  /** Every error a client sees carries `extensions.code` (restgraph's codes) and `extensions.status`. */
  formatError(error: Readonly<GraphQLError | Error>): GraphQLError {
    return this.#formatError(error);
  }

  #formatError(error: Readonly<GraphQLError | Error>): GraphQLError {
    if (!(error instanceof GraphQLError)) {
      // graphql-http's own request errors: "Unparsable JSON body", "Missing body", "Missing query", …
      const malformed = error.message === 'Unparsable JSON body' || error.message === 'Missing body';
      return requestError(error.message, malformed ? 'malformed-json' : 'bad-request');
    }
    // A passing database trouble is a 503 to retry, as in REST.
    const original = error.originalError instanceof TransientStoreError ? toRestgraphError(error.originalError) : error.originalError;
    if (original instanceof RestgraphError) {
      return new GraphQLError(original.message, {
        ...(error.nodes === undefined ? {} : { nodes: error.nodes }),
        ...(error.path === undefined ? {} : { path: error.path }),
        extensions: { code: original.code, status: original.status, ...(original.errors === undefined ? {} : { errors: original.errors }) },
      });
    }
    if (original !== undefined && !(original instanceof GraphQLError)) {
      this.#options.logUnexpected(original, undefined);
      return new GraphQLError('An unexpected error occurred. It has been logged; quote the request id when reporting it.', {
        ...(error.path === undefined ? {} : { path: error.path }),
        extensions: { code: 'internal', status: 500 },
      });
    }
    if (typeof error.extensions.code === 'string') return error;
    return withCode(error, error.message.startsWith('Syntax Error') ? 'graphql-syntax' : 'graphql-validation');
  }
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    ...(error.nodes === undefined ? {} : { nodes: error.nodes }),
    ...(error.source === undefined ? {} : { source: error.source }),
    ...(error.positions === undefined ? {} : { positions: error.positions }),
    ...(error.path === undefined ? {} : { path: error.path }),
    extensions: { ...error.extensions, code, status: 400 },
  });
}

/**
 * The key of a query in the document cache: its SHA-256, so a key is small whatever the query's
 * size. Computed on every request: crypto.hash (Node.js 20.12+) is more than twice as fast as a
 * Hash object for a query of a few hundred bytes.
 */
const documentKey: (query: string) => string =
  typeof crypto.hash === 'function' ? (query) => crypto.hash('sha256', query, 'base64') : (query) => crypto.createHash('sha256').update(query).digest('base64');

/** A document over a limit checked before it is parsed (no figure of its own to report). */
function documentLimitError(limit: 'maxTokens' | 'maxNesting', max: number, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'query-too-complex', status: 400, limit, max } });
}

function requestError(message: string, code: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, status: 400 } });
}

interface RawParams {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: Record<string, unknown>;
}

/** The request's parameters before checking, when they can be read at all (else the standard parser reports). */
function rawParams(req: Request<unknown, GraphqlRequestContext>): RawParams | undefined {
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
function isJsonPost(req: Request<unknown, GraphqlRequestContext>): boolean {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  const contentType = headers['content-type'];
  if (typeof contentType !== 'string') return false;
  const [mediaType, charset = 'charset=utf-8'] = contentType.replace(/\s/g, '').toLowerCase().split(';');
  return req.method === 'POST' && mediaType === 'application/json' && charset === 'charset=utf-8';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
