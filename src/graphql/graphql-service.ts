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
  type OperationDefinitionNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import { createHandler, type Handler, type OperationArgs, type RequestParams } from 'graphql-http';
import type { ListLimits } from '../core/list-query.js';
import type { OperationContext } from '../core/principal.js';
import type { AccountEmails } from '../core/accounts/account-emails.js';
import type { AccountOperations } from '../core/accounts/account-operations.js';
import type { ResourceOperations } from '../core/resource-operations.js';
import type { EventDispatcher } from '../core/event-dispatcher.js';
import { RateLimitedError, RestgraphError } from '../errors.js';
import type { RateLimits } from '../core/rate-limits.js';
import { charge, withCharge } from './graphql-charge.js';
import { toRestgraphError } from '../http/problem-details.js';
import { TransientStoreError } from '../store/store-errors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { RequestLoaders, type GraphqlCharge, type GraphqlContext, type PreparedArgs } from './graphql-context.js';
import { buildGraphqlSchema } from './graphql-schema.js';
import { MAX_FIELD_PAIRS, limitError, maxNestingOf, measureDocument, relationPageSizeOf, shapeProblems, type GraphqlLimits, type MeasuredDocument } from './query-limits.js';
import { costProblem, operationCost } from './operation-cost.js';
import type { PromiseOrValue } from '../promise-or-value.js';
import { scanDocument } from './document-scan.js';
import { MAX_JSON_DEPTH } from '../core/json-input-rules.js';
import { literalValuesProblem, variablesProblem } from './input-values.js';
import { CompiledExecution } from './compiled-execution.js';
import { fieldPairs } from './field-pairs.js';
import { PersistedQueries, requestError, type CacheUse, type PersistedQueryContext } from './persisted-queries.js';
import type { QueueLimits } from './queued-bytes.js';
import { SubscriptionGroups } from './subscription-groups.js';

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
export interface GraphqlRequestContext extends PersistedQueryContext {
  operation: OperationContext;
  /** Set when the operation was charged against the GraphQL budget (for the RateLimit headers). */
  charge?: GraphqlCharge;
  /** Set when the executed operation's result has errors (its response is then not cacheable). */
  hadErrors?: boolean;
  /** The parameters of a multipart request (graphql-multipart.ts), its uploads in the variables: taken as they are. */
  multipartParams?: RequestParams;
}

export interface GraphqlServiceOptions {
  limits: GraphqlLimits;
  /** The account operations of a schema with accounts: the account mutations call them. */
  accounts?: AccountOperations;
  /** Email verification and password reset of those accounts. */
  accountEmails?: AccountEmails;
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
  /** What subscribers that do not keep up may hold queued (see QueuedBytes). */
  subscriptionQueue: QueueLimits;
}




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
  readonly #persisted: PersistedQueries;
  /** GraphQL type names of resources: what the cost counts (not connections, edges, page info). */
  readonly #resourceTypes: ReadonlySet<string>;
  /** Rows a relation list returns without first/last. */
  readonly #relationPageSize: number;
  readonly #executor = new CompiledExecution();
  /** Subscriptions, sharing one execution per event among subscribers asking the same thing. */
  readonly subscriptions: SubscriptionGroups;

  constructor(model: SchemaModel, operations: ResourceOperations, options: GraphqlServiceOptions) {
    this.#relationPageSize = relationPageSizeOf(options.limits, options.listLimits);
    this.schema = buildGraphqlSchema(model, options.listLimits, this.#relationPageSize);
    this.sdl = `${printSchema(this.schema)}\n`;
    this.#operations = operations;
    this.#options = options;
    this.#resourceTypes = new Set([...model.resources.values()].map((r) => r.typeName));
    this.#rules = options.limits.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
    this.#documents = new LRUCache({ maxSize: options.documentCacheBytes ?? 32 * 1024 * 1024, sizeCalculation: (prepared) => prepared.bytes });
    this.#persisted = new PersistedQueries(options.persistedQueryCacheBytes ?? 16 * 1024 * 1024);
    this.subscriptions = new SubscriptionGroups(model, { format: (result) => this.formatResult(result), queue: options.subscriptionQueue });
    this.handle = createHandler<unknown, GraphqlRequestContext, GraphqlContext>({
      schema: this.schema,
      parseRequestParams: (req) => req.context.multipartParams ?? this.#persisted.parseRequestParams(req),
      onSubscribe: async (req, params) => {
        const prepared = await this.prepare(params, req.context.operation);
        if (!Array.isArray(prepared)) {
          // Kept only now that it has passed every check, so the hash alone can stand for it.
          this.#persisted.remember(req.context);
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
    const estimate = operationCost(this.schema, measured, operation, params.variables, listLimits.defaultLimit, this.#resourceTypes);
    const { cost } = estimate;
    if (cost > maxCost) return [limitError(costProblem(estimate, maxCost, { top: listLimits.defaultLimit, relation: this.#relationPageSize }))];
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

  /**
   * The operation a request would run, once its document has passed every check (kept in the
   * cache, so running it next prepares nothing again); undefined when it would be refused (running
   * it then says why). Charges nothing.
   */
  operationOf(params: RequestParams): OperationDefinitionNode | undefined {
    const prepared = this.#prepareDocument(params.query);
    if ('errors' in prepared) return undefined;
    return getOperationAST(prepared.document, params.operationName) ?? undefined;
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
      persistedQueries: this.#persisted.use,
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
        ...(this.#options.accounts === undefined ? {} : { accounts: this.#options.accounts }),
        ...(this.#options.accountEmails === undefined ? {} : { accountEmails: this.#options.accountEmails }),
      },
    };
  }

  /** Every error a client sees carries `extensions.code` (restgraph's codes) and `extensions.status`. */
  formatError(error: Readonly<GraphQLError | Error>): GraphQLError {
    return this.#formatError(error);
  }

  /**
   * A result as clients get it over a streaming transport (WebSocket, SSE): its errors with
   * restgraph's codes, and what the operation was charged. A subscription's shared result is
   * formatted once, by its group, and passed on as it is (its charge was reported when it started).
   */
  formatResult<R extends { errors?: readonly GraphQLError[] | undefined; extensions?: Record<string, unknown> | undefined }>(result: R, context?: unknown): R {
    if (this.subscriptions.isShared(result)) return result;
    const formatted = result.errors === undefined ? result : { ...result, errors: result.errors.map((e) => this.#formatError(e)) };
    return withCharge(formatted, context);
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
        extensions: { code: original.code, status: original.status, ...restgraphExtensions(original) },
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

/** What a RestgraphError tells a client beyond its code and status: the problems listed (and how many were left out), when to retry. */
function restgraphExtensions(error: RestgraphError): Record<string, unknown> {
  const retryAfter = Number(error.headers?.['retry-after']);
  return {
    ...(error.errors === undefined ? {} : { errors: error.errors }),
    ...(error.errorsOmitted === 0 ? {} : { errorsOmitted: error.errorsOmitted }),
    ...(Number.isInteger(retryAfter) ? { retryAfter } : {}),
  };
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

