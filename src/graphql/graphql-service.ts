import { createHash } from 'node:crypto';
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  OperationTypeNode,
  getOperationAST,
  getVariableValues,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  parse,
  printSchema,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
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
import { limitError, measureDocument, operationCost, shapeProblems, type DocumentShape, type GraphqlLimits } from './query-limits.js';
import { LruCache } from '../lru-cache.js';
import type { PromiseOrValue } from '../promise-or-value.js';

/** A parsed and validated document, kept so a repeated query skips both steps. */
interface PreparedDocument {
  document: DocumentNode;
  /** Shape per operation name ('' for the only or anonymous operation). */
  shapes: Map<string, DocumentShape>;
}

/** What the HTTP adapter hands over with each request. */
export interface GraphqlRequestContext {
  operation: OperationContext;
  /** Set when the operation was charged against the GraphQL budget (for the RateLimit headers). */
  charge?: GraphqlCharge;
  /** Set when the executed operation's result has errors (its response is then not cacheable). */
  hadErrors?: boolean;
}

export interface GraphqlServiceOptions {
  limits: GraphqlLimits;
  listLimits: ListLimits;
  /** The event path subscriptions read from. */
  events?: EventDispatcher;
  /** Logs an error no one foresaw (the client sees only "internal"). */
  logUnexpected: (error: unknown, requestId: string | undefined) => void;
  /** Parsed documents kept. @default 1000 */
  documentCacheSize?: number;
  /** Automatic persisted queries kept (by hash). @default 10000 */
  persistedQueryCacheSize?: number;
  /** Charges each operation its cost against the GraphQL budget, when one is set. */
  rateLimits?: RateLimits;
}


const SHA256_HEX = /^[0-9a-f]{64}$/;

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
  readonly #documents: LruCache<PreparedDocument>;
  readonly #persisted: LruCache<string>;
  /** GraphQL type names of resources: what the cost counts (not connections, edges, page info). */
  readonly #resourceTypes: ReadonlySet<string>;
  /** Compiled operations per parsed document (the document cache keeps documents alive). */
  readonly #compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

  constructor(model: SchemaModel, operations: ResourceOperations, options: GraphqlServiceOptions) {
    this.schema = buildGraphqlSchema(model, options.listLimits);
    this.sdl = `${printSchema(this.schema)}\n`;
    this.#operations = operations;
    this.#options = options;
    this.#resourceTypes = new Set([...model.resources.values()].map((r) => r.typeName));
    this.#rules = options.limits.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
    this.#documents = new LruCache(options.documentCacheSize ?? 1000);
    this.#persisted = new LruCache(options.persistedQueryCacheSize ?? 10_000);
    this.handle = createHandler<unknown, GraphqlRequestContext, GraphqlContext>({
      schema: this.schema,
      parseRequestParams: (req) => this.#parseRequestParams(req),
      onSubscribe: async (req, params) => {
        const prepared = await this.prepare(params, req.context.operation);
        if (!Array.isArray(prepared)) {
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
      execute: (args) => this.#execute(args),
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
      if (createHash('sha256').update(raw.query).digest('hex') !== hash) {
        throw requestError('provided sha does not match query: extensions.persistedQuery.sha256Hash must be the SHA-256 of the query text.', 'bad-request');
      }
      const params = await parseRequestParams(req);
      if (!Array.isArray(params)) this.#persisted.set(hash, raw.query);
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
   * Executes with a compiled form of the operation (graphql-jit), compiled once per cached
   * document; graphql-js executes whatever graphql-jit cannot compile.
   */
  #execute(args: ExecutionArgs): PromiseOrValue<ExecutionResult> {
    let byOperation = this.#compiled.get(args.document);
    if (byOperation === undefined) {
      byOperation = new Map();
      this.#compiled.set(args.document, byOperation);
    }
    const key = args.operationName ?? '';
    let compiled = byOperation.get(key);
    if (compiled === undefined) {
      const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
      compiled = isCompiledQuery(result) ? result : null;
      byOperation.set(key, compiled);
    }
    if (compiled === null) return execute(args);
    return compiled.query(args.rootValue, args.contextValue, args.variableValues);
  }

  /**
   * Parse (cached), validate (cached), then the limits: the execution arguments of a request, or
   * its errors. Every transport uses it (HTTP, WebSocket, SSE).
   */
  prepare(params: RequestParams, ctx: OperationContext): PromiseOrValue<OperationArgs<GraphqlContext> | readonly GraphQLError[]> {
    const { limits, listLimits } = this.#options;
    let prepared = this.#documents.get(params.query);
    if (prepared === undefined) {
      let document: DocumentNode;
      try {
        document = parse(params.query, { maxTokens: limits.maxTokens });
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        // graphql-js: "Syntax Error: Document contains more that 5000 tokens. Parsing aborted."
        const tooLarge = /^Syntax Error: Document contains more th(?:at|an) \d+ tokens/.test(error.message);
        return [
          new GraphQLError(error.message, {
            ...(error.source === undefined ? {} : { source: error.source }),
            ...(error.positions === undefined ? {} : { positions: error.positions }),
            extensions: tooLarge
              ? { code: 'query-too-complex', status: 400, limit: 'maxTokens', max: limits.maxTokens }
              : { code: 'graphql-syntax', status: 400 },
          }),
        ];
      }
      const errors = validate(this.schema, document, this.#rules);
      if (errors.length > 0) return errors.map((e) => withCode(e, 'graphql-validation'));
      prepared = { document, shapes: new Map() };
      this.#documents.set(params.query, prepared);
    }
    const operation = getOperationAST(prepared.document, params.operationName);
    if (operation === null || operation === undefined) {
      const message = params.operationName === undefined ? 'The document has several operations; say which with operationName.' : `The document has no operation named ${params.operationName}.`;
      return [new GraphQLError(message, { extensions: { code: 'graphql-validation', status: 400 } })];
    }
    const shape = this.#shapeOf(prepared, operation);
    const problems = shapeProblems(shape, limits);
    if (problems.length > 0) return problems.map(limitError);
    const cost = operationCost(this.schema, prepared.document, operation, params.variables, listLimits.defaultLimit, this.#resourceTypes);
    if (cost > limits.maxCost) {
      return [
        limitError({
          limit: 'maxCost',
          actual: cost,
          max: limits.maxCost,
          message: `The query may return ${cost} objects; at most ${limits.maxCost} are allowed (a list field counts its first/last, or ${listLimits.defaultLimit} without). Ask for smaller pages.`,
        }),
      ];
    }
    if ((operation.variableDefinitions?.length ?? 0) > 0 || params.variables !== undefined) {
      const coerced = getVariableValues(this.schema, operation.variableDefinitions ?? [], params.variables ?? {});
      if (coerced.errors !== undefined) return coerced.errors.map((e) => withCode(e, 'graphql-validation'));
    }
    const args = this.#args(prepared.document, params, ctx, operation.operation);
    // Charged last: a request refused for any other reason costs nothing.
    const charged = this.#options.rateLimits?.chargeGraphql(ctx.principal, ctx.clientAddress, Math.max(1, cost));
    if (charged === undefined) return args;
    if (charged instanceof Promise) return charged.then((result) => charge(args, result, cost));
    return charge(args, charged, cost);
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

  #shapeOf(prepared: PreparedDocument, operation: OperationDefinitionNode): DocumentShape {
    const key = operation.name?.value ?? '';
    let shape = prepared.shapes.get(key);
    if (shape === undefined) {
      shape = measureDocument(prepared.document, operation);
      prepared.shapes.set(key, shape);
    }
    return shape;
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
