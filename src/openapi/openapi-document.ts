import type { ListLimits } from '../core/list-query.js';
import { SchemaError } from '../errors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import { BEARER, COMMON_HEADERS, PROBLEM_SCHEMAS, commonParameters } from './common-components.js';
import { resourceParameters } from './list-parameters.js';
import { ref, type OpenApiDocument, type OperationObject, type ParameterObject, type PathItemObject, type SchemaObject } from './openapi-types.js';
import { hoistProblemResponses, problemResponses } from './problem-responses.js';
import { resourcePaths } from './resource-paths.js';
import { aggregatePath } from './aggregate-path.js';
import { dbPath, JSON_SERVER_PARAMETERS, withJsonServer } from './json-server-operations.js';
import { resourceSchemas } from './resource-schemas.js';
import { accountAdminPaths } from './account-admin-paths.js';
import { accountPaths } from './account-paths.js';
import { oidcPaths } from './oidc-paths.js';
import { authPaths, eventPaths, systemPaths, tokenPaths, webhookPaths } from './service-paths.js';
import { eventTypes, serviceSchemas } from './service-schemas.js';
import { resourcesFor } from './versioned-view.js';

export interface OpenApiOptions {
  /**
   * Where the resource paths start: `''` for the unversioned paths (the latest version), `/v1`
   * for `/v1/users`, … The service paths (`/v1/tokens`, `/healthz`, …) are the same in every document.
   */
  prefix: string;
  listLimits: ListLimits;
  /** Most rows `include` embeds per parent. */
  maxEmbedded: number;
  /** Whether responses may carry RateLimit headers and 429s. */
  rateLimits: boolean;
  /** `GET /metrics` as served (undefined: switched off). */
  metrics?: { public: boolean } | undefined;
  /** `'json-server'`: the REST lists also take json-server's parameters and answers (docs/json-server.md). */
  compat?: 'json-server' | undefined;
  /** The OpenID Connect providers configured (their sign-in paths are documented when there are any). */
  oidcProviders?: readonly string[];
}

/** Where each document is served: the unversioned one (latest) and one per version. */
export function openApiDocumentUrls(schema: SchemaModel): { url: string; version: string; prefix: string }[] {
  return [
    { url: '/openapi.json', version: schema.latestVersion, prefix: '' },
    ...schema.versions.map((version) => ({ url: `/${version}/openapi.json`, version, prefix: `/${version}` })),
  ];
}

/**
 * The OpenAPI 3.1 document of one version of the API: every REST route (src/rest/), with its
 * parameters, bodies, responses, headers and security, generated from the schema model. Pure: the
 * same schema, version and options give the same document.
 *
 * @see https://spec.openapis.org/oas/v3.1.0
 * @throws SchemaError when a resource's schema names meet another's (`userCreates` beside `users`,
 *   whose create body is `UserCreate`). restgraph's own schemas are `restgraph.*`, which no resource can be.
 */
export function buildOpenApiDocument(schema: SchemaModel, version: string, options: OpenApiOptions): OpenApiDocument {
  const resources = resourcesFor(schema, version);
  const parameters: Record<string, ParameterObject> = commonParameters(options.listLimits);
  const types = eventTypes(resources.map((r) => r.singular));
  const schemas: Record<string, SchemaObject> = { ...PROBLEM_SCHEMAS, ...serviceSchemas(types) };
  const paths: Record<string, PathItemObject> = {};

  for (const resource of resources) {
    for (const [name, value] of Object.entries(resourceSchemas(resource, options))) {
      if (Object.hasOwn(schemas, name)) clash(resource.name, name);
      schemas[name] = value;
    }
    Object.assign(parameters, resourceParameters(resource, options.listLimits));
  }
  if (options.compat === 'json-server') Object.assign(parameters, JSON_SERVER_PARAMETERS);
  for (const resource of resources) {
    const own = { ...aggregatePath(resource, options.prefix, options.listLimits, parameters), ...resourcePaths(resource, options.prefix, parameters) };
    Object.assign(paths, options.compat === 'json-server' ? withJsonServer(resource, options.prefix, own) : own);
  }
  if (options.compat === 'json-server') Object.assign(paths, dbPath(resources, options.prefix, options.listLimits.maxLimit));
  Object.assign(
    paths,
    tokenPaths(),
    authPaths(),
    oidcPaths(options.oidcProviders ?? []),
    webhookPaths(),
    eventPaths(
      types,
      resources.map((r) => r.model.access.read),
    ),
    systemPaths(openApiDocumentUrls(schema), options.metrics),
    schema.accounts === undefined ? {} : accountPaths(schema.accounts, resources.find((r) => r.name === schema.accounts?.resource)?.typeName),
    schema.accounts === undefined ? {} : accountAdminPaths(schema.accounts),
  );
  uniqueOperationIds(paths);
  if (options.rateLimits) addRateLimits(paths);
  const responses = hoistProblemResponses(operations(paths));

  return {
    openapi: '3.1.0',
    info: { title: 'restgraph API', version, description: describe(schema, version, options.prefix) },
    tags: [
      ...resources.map((r) => ({ name: r.name, description: r.description ?? `The ${r.name} resource.` })),
      { name: 'tokens', description: 'API keys, for admins.' },
      { name: 'auth', description: 'The caller\'s own credential and what it may do.' },
      { name: 'webhooks', description: 'Webhook endpoints and their deliveries, for admins (Standard Webhooks signatures).' },
      { name: 'events', description: 'The event stream (Server-Sent Events).' },
      { name: 'service', description: 'What is served, health, and these documents.' },
    ],
    paths,
    components: {
      schemas,
      responses,
      parameters,
      headers: { ...COMMON_HEADERS },
      securitySchemes: {
        [BEARER]: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer <token>: an API key (`rg_…`, from `restgraph token create` or POST /v1/tokens), a JWT from a configured ' +
            'issuer (scopes from its scope claim), or the admin token. Operations list the scopes that would do (any one of them); a token ' +
            'with the `admin` scope passes every rule.',
        },
      },
    },
  };
}

/** Every operation may be refused for going over a rate limit, and every response may say how much is left. */
function addRateLimits(paths: Record<string, PathItemObject>): void {
  for (const op of operations(paths)) {
    Object.assign(op.responses, problemResponses({ 429: [] }));
    for (const response of Object.values(op.responses)) {
      if ('$ref' in response) continue;
      response.headers = { ...response.headers, RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimit-Policy') };
    }
  }
}

/**
 * Operation ids must be unique; names built from resource names can meet (a resource `userPosts`
 * next to users' relation `posts`, one named `healths`). A later one gets a numbered suffix.
 */
function uniqueOperationIds(paths: Record<string, PathItemObject>): void {
  const seen = new Set<string>();
  for (const op of operations(paths)) {
    let id = op.operationId;
    for (let n = 2; seen.has(id); n++) id = `${op.operationId}${n}`;
    op.operationId = id;
    seen.add(id);
  }
}

function operations(paths: Record<string, PathItemObject>): OperationObject[] {
  return Object.values(paths).flatMap((item) => [item.get, item.put, item.post, item.delete, item.patch].filter((op) => op !== undefined));
}

function clash(resource: string, name: string): never {
  throw new SchemaError('(OpenAPI names)', [
    { path: `resources.${resource}`, message: `its OpenAPI schema ${name} is also the name of another resource's schema; rename the resource or set its singular` },
  ]);
}

function describe(schema: SchemaModel, version: string, prefix: string): string {
  const where = prefix === '' ? `the unversioned paths (\`/users\`), which serve the latest version, ${version}` : `the paths of version ${version} (\`${prefix}/…\`)`;
  const others = [...schema.versions.map((v) => `[/${v}/openapi.json](/${v}/openapi.json)`), '[/openapi.json](/openapi.json) (latest)'].join(', ');
  return [
    `The REST API generated by restgraph from its resource schema. This document describes ${where}. Documents: ${others}. ` +
      'GraphQL is served at `/graphql` (SDL at `/graphql/schema.graphql`).',
    '**Authentication.** `Authorization: Bearer <token>` on every request that needs one; each operation says what it needs. ' +
      'A credential that is sent must be valid, even where none is needed.',
    '**Errors** are `application/problem+json` (RFC 9457) with a stable `code`; every code is described in docs/errors.md.',
    '**Lists** are bare JSON arrays; paging metadata is in headers: `Link` (rel="next") and `X-Total-Count` with `count=true`.',
    '**Single objects** carry a strong `ETag`: `If-None-Match` answers 304, `If-Match` on writes answers 412 when stale. ' +
      'POST and PATCH take `Idempotency-Key`.',
    '**HEAD** works on every GET path (same status and headers, no body); **OPTIONS** on every path answers 204 with `Allow`; ' +
      'another method on a known path is a 405 with `Allow`. Every response carries `X-Request-Id`.',
  ].join('\n\n');
}
