import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/app/app-options.js';
import { OPERATORS_BY_TYPE } from '../src/core/list-query.js';
import { buildOpenApiDocument } from '../src/openapi/openapi-document.js';
import type { OpenApiDocument, ParameterObject, ReferenceObject, SchemaObject } from '../src/openapi/openapi-types.js';
import { createAjv } from '../src/schema/field-json-schema.js';
import { SCHEMA_EXTENSIONS } from '../src/openapi/resource-schemas.js';
import { EXAMPLE_SCHEMA_PATH, loadSchemaFile } from '../src/schema/load-schema.js';
import { finish, killAll, startCli, type Running } from './helpers/cli-process.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';

// The documents' own routes must conform too.
checkResponsesAgainstOpenApi();

/**
 * The OpenAPI 3.1 documents at /openapi.json and /<version>/openapi.json: valid (checked with
 * @readme/openapi-parser, which validates 3.1 against the specification's schema and adds checks
 * the schema cannot make: path parameters declared, unique operation ids), every schema valid JSON
 * Schema 2020-12, every route of the app described and nothing else, and what they say about
 * parameters, security and errors taken from the schema model. Responses are checked against them
 * in test/openapi-responses.test.ts and in every REST test file (checkResponsesAgainstOpenApi).
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const VERSIONED_SCHEMA = `
versions: [v1, v2]
resources:
  notes:
    access: { read: authenticated, create: public, update: [notes:write], delete: [notes:admin, notes:write] }
    fields:
      title:  { type: string, required: true, default: untitled }
      body:   { type: string, deprecated: "Use text instead." }
      text:   { type: string }
      rank:   { type: number, min: 0 }
      due:    { type: date }
      meta:   { type: json }
      color:  { type: enum, values: [red, green] }
`;

async function assertValidOpenApi(document: OpenApiDocument): Promise<void> {
  const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
  expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
  expect(result.warnings).toEqual([]);
  expect(document.openapi).toBe('3.1.0');
}

/** Compiles every schema of the document in ajv's strict 2020-12 mode (unknown keywords other than restgraph's x- extensions, bad types and misplaced required fail). */
function assertStrictJsonSchemas(document: OpenApiDocument): void {
  const ajv = createAjv();
  ajv.addVocabulary([...SCHEMA_EXTENSIONS]);
  const id = 'https://restgraph.invalid/strict';
  const text = JSON.stringify({ $id: id, $defs: document.components.schemas }).replaceAll('"#/components/schemas/', `"${id}#/$defs/`);
  ajv.addSchema(JSON.parse(text) as SchemaObject);
  const inline: SchemaObject[] = [];
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'schema' && typeof child === 'object' && child !== null) inline.push(child as SchemaObject);
        else collect(child);
      }
    }
  };
  collect({ paths: document.paths, parameters: document.components.parameters, headers: document.components.headers, responses: document.components.responses });
  expect(inline.length).toBeGreaterThan(100);
  for (const schema of inline) {
    const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${id}#/$defs/`)) as SchemaObject;
    expect(() => ajv.compile(rewritten), JSON.stringify(schema)).not.toThrow();
  }
}

function parameter(document: OpenApiDocument, p: ParameterObject | ReferenceObject): ParameterObject {
  if (!('$ref' in p)) return p;
  const found = document.components.parameters[p.$ref.replace('#/components/parameters/', '')];
  if (found === undefined) throw new Error(`no ${p.$ref}`);
  return found;
}

/** Route paths as Fastify's router prints them (`/users/:id`), those of GraphQL and asset files (and the favicon) left out. */
function servedPaths(app: TestApp['app']): Set<string> {
  const stack: string[] = [];
  const paths = new Set<string>();
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)/.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    const path = stack.join('').replace(/^\/\//, '/');
    if (!path.startsWith('/graphql') && !path.startsWith('/docs/assets') && !path.startsWith('/admin/assets') && path !== '/favicon.ico') paths.add(path);
  }
  return paths;
}

describe('the OpenAPI documents of the example schema', () => {
  let t: TestApp;
  let latest: OpenApiDocument;
  let v1: OpenApiDocument;
  beforeAll(async () => {
    t = await startTestApp();
    latest = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    v1 = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/v1/openapi.json' }));
  });
  afterAll(async () => t.close());

  it('are valid OpenAPI 3.1 documents', async () => {
    await assertValidOpenApi(latest);
    await assertValidOpenApi(v1);
  });

  it('hold only valid JSON Schema 2020-12 (ajv strict mode compiles every schema)', () => {
    assertStrictJsonSchemas(latest);
    assertStrictJsonSchemas(v1);
  });

  it('/openapi.json describes the unversioned paths, /v1/openapi.json the /v1 paths; both the service paths', () => {
    const paths = (d: OpenApiDocument) => Object.keys(d.paths);
    expect(paths(latest)).toEqual(expect.arrayContaining(['/users', '/users/{id}', '/users/{id}/posts', '/posts/{id}/user', '/v1/tokens', '/v1/webhooks/{id}/deliveries/{deliveryId}/retry', '/v1/events', '/', '/healthz', '/readyz', '/openapi.json', '/v1/openapi.json', '/docs', '/admin']));
    expect(paths(latest).some((p) => p.startsWith('/v1/users'))).toBe(false);
    expect(paths(v1)).toEqual(expect.arrayContaining(['/v1/users', '/v1/users/{id}', '/v1/orders/{id}/product', '/v1/tokens']));
    expect(paths(v1).some((p) => p.startsWith('/users'))).toBe(false);
    expect(latest.info.version).toBe('v1');
  });

  it('describe every route the app serves and nothing else: documented methods are served, the others answer 405', async () => {
    const served = [...servedPaths(t.app)];
    const documented = (d: OpenApiDocument): string[] => Object.keys(d.paths).map((p) => p.replace(/\{(\w+)\}/g, ':$1')).sort();
    // Each document has the resource paths of its version, and all the service paths.
    const unversioned = /^\/(users|posts|products|orders)(\/|$)/;
    const versioned = /^\/v1\/(users|posts|products|orders)(\/|$)/;
    expect(documented(latest)).toEqual(served.filter((p) => !versioned.test(p)).sort());
    expect(documented(v1)).toEqual(served.filter((p) => !unversioned.test(p)).sort());
    for (const [path, item] of Object.entries(latest.paths)) {
      const url = path.replace(/\{\w+\}/g, '1');
      for (const method of METHODS) {
        if (item[method] !== undefined) {
          expect(t.app.hasRoute({ method: method.toUpperCase(), url: path.replace(/\{(\w+)\}/g, ':$1') }), `${method} ${path}`).toBe(true);
        } else {
          const response = await t.app.inject({ method: method.toUpperCase() as 'GET', url, ...(method === 'get' ? {} : { payload: {} }) });
          expect(response.statusCode, `${method} ${path}`).toBe(405);
        }
      }
    }
  });

  it('list a filter for every field and operator its type takes, typed like the field, and sort, fields, include, paging', () => {
    const list = latest.paths['/products']?.get;
    const names = (list?.parameters ?? []).map((p) => parameter(latest, p).name);
    expect(names).toEqual(expect.arrayContaining(['sort', 'fields', 'include', 'limit', 'after', 'offset', 'count', 'price', 'price[lt]', 'price[in]', 'currency', 'currency[in]', 'active[isNull]', 'createdAt[gte]']));
    expect(names).not.toContain('currency[lt]');
    expect(names).not.toContain('active[lt]');
    const resource = loadSchemaFile(EXAMPLE_SCHEMA_PATH).resources.get('products');
    for (const field of resource?.fields.values() ?? []) {
      const ops = OPERATORS_BY_TYPE[field.type];
      expect(names.filter((n) => n.startsWith(`${field.name}[`)).sort()).toEqual(ops.map((op) => `${field.name}[${op}]`).sort());
    }
    const byName = (name: string) => (list?.parameters ?? []).map((p) => parameter(latest, p)).find((p) => p.name === name);
    expect(byName('currency')?.schema).toEqual({ type: 'string', enum: ['EUR', 'USD', 'GBP'] });
    expect(byName('price[in]')).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { type: 'number' }, maxItems: 100 } });
    expect(byName('limit')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
    expect((byName('include')?.schema.items as SchemaObject).enum).toEqual(['orders']);
    // The relation route /users/{id}/posts takes the list parameters of posts.
    const related = (latest.paths['/users/{id}/posts']?.get?.parameters ?? []).map((p) => parameter(latest, p).name);
    expect(related).toEqual(expect.arrayContaining(['published', 'title[startsWith]', 'include']));
  });

  it('take security from the access rules: public, any of the scopes, both resources of a relation, admin only', () => {
    expect(latest.paths['/posts']?.get?.security).toEqual([{}, { bearer: [] }]);
    expect(latest.paths['/posts']?.post?.security).toEqual([{ bearer: ['posts:write'] }]);
    expect(latest.paths['/users']?.get?.security).toEqual([{ bearer: ['users:read'] }, { bearer: ['users:write'] }]);
    expect(latest.paths['/users/{id}/orders']?.get?.security).toEqual([
      { bearer: ['users:read', 'orders:read'] },
      { bearer: ['users:read', 'orders:write'] },
      { bearer: ['users:write', 'orders:read'] },
      { bearer: ['users:write', 'orders:write'] },
    ]);
    expect(latest.paths['/v1/tokens']?.post?.security).toEqual([{ bearer: ['admin'] }]);
    expect(latest.paths['/healthz']?.get?.security).toEqual([{}]);
    expect(latest.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // A public read answers no 403, but a credential sent must be valid (401 invalid-token).
    const postsList = latest.paths['/posts']?.get?.responses ?? {};
    expect(Object.keys(postsList)).toContain('401');
    expect(latest.paths['/products']?.get?.responses['403']).toBeDefined(); // include=orders reads orders
  });

  it('document problem responses as application/problem+json with the codes of docs/errors.md', () => {
    const documented = new Set([...readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8').matchAll(/^### (\S+)$/gm)].map((m) => m[1]));
    const used = new Set<string>();
    for (const response of Object.values(latest.components.responses)) {
      const schema = response.content?.['application/problem+json']?.schema;
      expect(schema?.allOf).toEqual([{ $ref: '#/components/schemas/restgraph.Problem' }]);
      for (const code of ((schema?.properties as { code?: { enum?: string[] } } | undefined)?.code?.enum ?? [])) used.add(code);
    }
    for (const code of used) expect(documented.has(code), code).toBe(true);
    expect([...used].sort()).toEqual(
      ['authentication-required', 'bad-request', 'database-unavailable', 'exclusion-conflict', 'forbidden', 'idempotency-key-in-use', 'idempotency-key-reused', 'internal', 'invalid-query', 'invalid-token', 'malformed-json', 'not-acceptable', 'not-found', 'payload-too-large', 'precondition-failed', 'reference-conflict', 'server-timeout', 'service-unavailable', 'unique-conflict', 'unsupported-media-type', 'uri-too-long', 'validation-failed'].sort(),
    );
    const replace = latest.paths['/users/{id}']?.put;
    expect(Object.keys(replace?.responses ?? {})).toEqual(['200', '400', '401', '403', '404', '406', '409', '412', '413', '414', '415', '422', '429', '500', '503']);
    expect(replace?.parameters).toEqual([{ $ref: '#/components/parameters/IfMatch' }]);
    const create = latest.paths['/users']?.post;
    expect(create?.parameters).toEqual([{ $ref: '#/components/parameters/IdempotencyKey' }]);
    expect(create?.responses['201']).toMatchObject({ headers: { Location: { $ref: '#/components/headers/Location' }, ETag: { $ref: '#/components/headers/ETag' } } });
    expect(latest.paths['/users/{id}']?.patch?.requestBody?.content).toHaveProperty(['application/merge-patch+json']);
  });

  it('describe records, bodies and relations from the fields', () => {
    const schemas = latest.components.schemas;
    expect(schemas.User).toMatchObject({ required: ['id', 'createdAt', 'updatedAt', 'name', 'email', 'bio'], additionalProperties: false });
    expect((schemas.User?.properties as Record<string, SchemaObject>).email).toMatchObject({ type: ['string', 'null'] });
    expect((schemas.User?.properties as Record<string, SchemaObject>).posts).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Post' } });
    expect((schemas.Post?.properties as Record<string, SchemaObject>).user).toMatchObject({ anyOf: [{ $ref: '#/components/schemas/User' }, { type: 'null' }] });
    expect(schemas.UserCreate).toMatchObject({ required: ['name'], additionalProperties: false });
    expect((schemas.UserCreate?.properties as Record<string, SchemaObject>).name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(schemas.UserCreate?.properties).not.toHaveProperty('id');
    expect((schemas.UserReplace?.properties as Record<string, SchemaObject>).id).toMatchObject({ readOnly: true });
    expect(schemas.UserPatch).not.toHaveProperty('required');
    // The owner field may be left out under the owner rule.
    expect(schemas.OrderCreate?.required).toEqual(['productId', 'quantity']);
    expect((schemas.ProductCreate?.properties as Record<string, SchemaObject>).currency).toMatchObject({ enum: ['EUR', 'USD', 'GBP', null], default: 'EUR' });
  });

  it('are built once and served with a strong ETag (304 on If-None-Match, HEAD without a body)', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const again = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(first.body).toBe(again.body);
    expect(first.headers.etag).toMatch(/^"[^"]+"$/);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    const cached = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(cached.statusCode).toBe(304);
    const head = await t.app.inject({ method: 'HEAD', url: '/v1/openapi.json' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const options = resolveOptions({});
    expect(json(first)).toEqual(buildOpenApiDocument(loadSchemaFile(EXAMPLE_SCHEMA_PATH), 'v1', { prefix: '', listLimits: options.listLimits, maxEmbedded: options.maxEmbedded, rateLimits: true, metrics: { public: false } }));
  });
});

describe('a schema with two versions, deprecated fields and other access rules', () => {
  let t: TestApp;
  let dir: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    dir = tempDir();
    writeFileSync(join(dir.path, 'notes.yaml'), VERSIONED_SCHEMA);
    t = await startTestApp({ schema: join(dir.path, 'notes.yaml'), listLimits: { maxLimit: 50, defaultLimit: 10 } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('serves a valid document per version and one for the latest, with deprecated fields marked', async () => {
    for (const url of ['/openapi.json', '/v1/openapi.json', '/v2/openapi.json']) {
      const document = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url }));
      await assertValidOpenApi(document);
      assertStrictJsonSchemas(document);
    }
    const latest = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(latest.info.version).toBe('v2');
    expect(Object.keys(latest.paths)).toEqual(expect.arrayContaining(['/notes', '/v1/openapi.json', '/v2/openapi.json']));
    expect((latest.components.schemas.Note?.properties as Record<string, SchemaObject>).body).toMatchObject({ deprecated: true, description: 'Deprecated: Use text instead.' });
    const list = latest.paths['/notes']?.get;
    const body = (list?.parameters ?? []).map((p) => parameter(latest, p)).filter((p) => p.name.startsWith('body'));
    expect(body.length).toBeGreaterThan(0);
    for (const p of body) expect(p.deprecated, p.name).toBe(true);
    expect((list?.parameters ?? []).map((p) => parameter(latest, p)).find((p) => p.name === 'limit')?.schema).toMatchObject({ maximum: 50, default: 10 });
    expect(list?.security).toEqual([{ bearer: [] }]);
    expect(latest.paths['/notes']?.post?.security).toEqual([{}, { bearer: [] }]);
    expect(latest.paths['/notes/{id}']?.delete?.security).toEqual([{ bearer: ['notes:admin'] }, { bearer: ['notes:write'] }]);
    // No relations: no include parameter; authenticated reads answer no 403.
    expect((list?.parameters ?? []).map((p) => parameter(latest, p).name)).not.toContain('include');
    expect(list?.responses['403']).toBeUndefined();
  });
});

describe('names built from resource names', () => {
  const build = (yaml: string): OpenApiDocument => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir.path, 's.yaml'), yaml);
      const options = resolveOptions({});
      return buildOpenApiDocument(loadSchemaFile(join(dir.path, 's.yaml')), 'v1', { prefix: '', listLimits: options.listLimits, maxEmbedded: options.maxEmbedded, rateLimits: true });
    } finally {
      dir.cleanup();
    }
  };
  const note = '{ fields: { note: { type: string } } }';

  it("never meet restgraph's own (restgraph.*), and operation ids that meet get a suffix", async () => {
    const document = build(`resources:
  users: { fields: { name: { type: string } }, relations: { posts: { hasMany: posts, foreignKey: userId } } }
  posts: { fields: { userId: { type: integer, references: users } } }
  userPosts: ${note}
  healths: ${note}
  webhookDeliveries: ${note}
  problems: ${note}
  tokenCreates: ${note}
`);
    await assertValidOpenApi(document);
    expect(document.paths['/userPosts']?.get?.operationId).toBe('listUserPosts2');
    expect(document.paths['/healthz']?.get?.operationId).toBe('getHealth2');
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['Problem', 'TokenCreate', 'restgraph.Problem', 'restgraph.TokenCreate']));
  });

  it("a resource whose schema is another resource's body schema (userCreates beside users) is refused, naming it", () => {
    expect(() => build(`resources:\n  users: ${note}\n  userCreates: ${note}\n`)).toThrow(/resources\.userCreates: its OpenAPI schema UserCreate/);
  });
});

describe('restgraph export openapi', () => {
  let dir: ReturnType<typeof tempDir>;
  let children: Running[];
  let t: TestApp;
  beforeEach(async () => {
    dir = tempDir('restgraph-export-');
    children = [];
    writeFileSync(join(dir.path, 'notes.yaml'), VERSIONED_SCHEMA);
    t = await startTestApp({ schema: join(dir.path, 'notes.yaml') });
  });
  afterEach(async () => {
    await killAll(children);
    await t.close();
    dir.cleanup();
  });

  it('prints the document /openapi.json serves, and with --version that of /<version>/openapi.json; no database needed', async () => {
    const latest = await finish(startCli(dir.path, ['export', 'openapi', 'notes.yaml'], {}, children));
    expect(latest.code).toBe(0);
    expect(latest.stderr).toBe('');
    expect(JSON.parse(latest.stdout)).toEqual(json(await t.app.inject({ method: 'GET', url: '/openapi.json' })));
    const v1 = await finish(startCli(dir.path, ['export', 'openapi', '--version', 'v1'], { RESTGRAPH_SCHEMA: 'notes.yaml' }, children));
    expect(v1.code).toBe(0);
    expect(JSON.parse(v1.stdout)).toEqual(json(await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })));
    await assertValidOpenApi(JSON.parse(v1.stdout) as OpenApiDocument);
    const example = await finish(startCli(dir.path, ['export', 'openapi'], {}, children));
    expect(Object.keys((JSON.parse(example.stdout) as OpenApiDocument).paths)).toContain('/users/{id}/posts');
  });

  it('an unknown version or a missing schema file exits 1 with the reason, nothing on stdout', async () => {
    const version = await finish(startCli(dir.path, ['export', 'openapi', 'notes.yaml', '--version', 'v9'], {}, children));
    expect(version).toMatchObject({ code: 1, stdout: '' });
    expect(version.stderr).toContain("--version: must be one of the schema's versions (v1, v2)");
    const missing = await finish(startCli(dir.path, ['export', 'openapi', 'nope.yaml'], {}, children));
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('[RG_SCHEMA_INVALID]');
  });
});
