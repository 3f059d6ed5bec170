import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { createAjv } from '../../src/schema/field-json-schema.js';
import type { HeaderObject, OpenApiDocument, OperationObject, PathItemObject, ReferenceObject, ResponseObject, SchemaObject } from '../../src/openapi/openapi-types.js';
import { SCHEMA_EXTENSIONS } from '../../src/openapi/resource-schemas.js';

/** One request as sent and its response as received (the parts `app.inject()` gives). */
export interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** A served document and the path prefix of the requests it describes (`''` for the latest, `/v1`). */
export interface DocumentForPrefix {
  prefix: string;
  document: OpenApiDocument;
}

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

interface CompiledDocument {
  prefix: string;
  document: OpenApiDocument;
  /** The ajv id under which the document's component schemas are registered. */
  id: string;
  /** Path templates as regular expressions, most literal first. */
  routes: { template: string; pattern: RegExp; item: PathItemObject }[];
}

/**
 * Checks responses against the OpenAPI documents the server serves: the status must be documented
 * for the operation, required headers present and every documented header's value valid, the
 * content type documented, and the body valid against its schema (JSON Schema 2020-12, ajv in
 * strict mode, which also rejects a malformed schema in the document). Requests outside the
 * documents' scope (GraphQL, the reference page's assets) are not checked.
 *
 * `fields=a,b` makes objects hold only those fields (and included relations): that one rule the
 * schema cannot state is applied here, as the parameter's description states it.
 */
export class ResponseConformance {
  readonly #ajv: Ajv2020;
  readonly #documents: CompiledDocument[];
  readonly #validators = new Map<string, ValidateFunction>();
  /** `<document prefix> <operationId> <status>` of every response checked against an operation. */
  readonly covered = new Set<string>();

  constructor(documents: readonly DocumentForPrefix[]) {
    // Not strictRequired: a sparse fieldset requires names its wrapper does not define itself.
    this.#ajv = createAjv({ strictRequired: false });
    // restgraph's specification extensions (x-…, allowed in OpenAPI schemas): annotations only.
    this.#ajv.addVocabulary([...SCHEMA_EXTENSIONS]);
    this.#documents = documents
      .map(({ prefix, document }, i) => {
        const id = `https://restgraph.invalid/openapi/${i}`;
        const defs: Record<string, SchemaObject> = {};
        for (const [name, schema] of Object.entries(document.components.schemas)) {
          defs[name] = schema;
          // The twin a sparse fieldset (fields=…) is checked against: no field is required.
          const sparse = { ...schema };
          delete sparse.required;
          defs[`${name}__sparse`] = sparse;
        }
        this.#ajv.addSchema(rewriteRefs({ $id: id, $defs: defs }, id) as SchemaObject);
        const routes = Object.entries(document.paths)
          .map(([template, item]) => ({ template, item, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`) }))
          .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
        return { prefix, document, id, routes };
      })
      // The longest prefix first: /v1/users belongs to the v1 document.
      .sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** What is wrong with this response, as sentences; empty when it conforms (or is out of scope). */
  check(exchange: Exchange): string[] {
    const url = new URL(exchange.url, 'http://localhost');
    let path = url.pathname;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    if (path === '/graphql' || path.startsWith('/graphql/') || path.startsWith('/docs/assets/')) return [];
    const what = `${exchange.method} ${exchange.url} → ${exchange.status}`;
    const method = exchange.method.toUpperCase();

    const found = this.#route(path);
    if (found === undefined) {
      // Unknown paths are a 404 problem; nothing else may answer outside the documents.
      if (exchange.status === 404) return this.#checkProblem(what, exchange, 'not-found');
      return [`${what}: the path is not in the OpenAPI document`];
    }
    const { compiled, item, template } = found;
    if (method === 'OPTIONS') {
      return exchange.status === 204 && header(exchange, 'allow') !== undefined ? [] : [`${what}: OPTIONS must answer 204 with Allow`];
    }
    const op: OperationObject | undefined = item[(method === 'HEAD' ? 'get' : method.toLowerCase()) as Method];
    if (op === undefined) {
      if (exchange.status === 405 && header(exchange, 'allow') !== undefined) return this.#checkProblem(what, exchange, 'method-not-allowed');
      if (exchange.status === 404) return this.#checkProblem(what, exchange, 'not-found');
      return [`${what}: ${template} has no ${method} operation, and the answer is not a 405 with Allow`];
    }
    const declared = op.responses[String(exchange.status)];
    if (declared === undefined) return [`${what}: status ${exchange.status} is not documented for ${method} ${template} (${op.operationId})`];
    this.covered.add(`${compiled.prefix} ${op.operationId} ${exchange.status}`);
    const response = resolve<ResponseObject>(compiled.document, declared);
    const problems: string[] = [];
    for (const [name, value] of Object.entries(response.headers ?? {})) {
      const spec = resolve<HeaderObject>(compiled.document, value);
      const actual = header(exchange, name);
      if (actual === undefined) {
        if (spec.required === true) problems.push(`${what}: the required header ${name} is missing`);
        continue;
      }
      const typed = spec.schema.type === 'integer' && /^-?\d+$/.test(actual) ? Number(actual) : actual;
      const errors = this.#validate(compiled, JSON.stringify(spec.schema), spec.schema, typed);
      if (errors !== undefined) problems.push(`${what}: header ${name}: ${actual} ${errors}`);
    }
    const hasBody = exchange.body !== '';
    if (method === 'HEAD') {
      if (hasBody) problems.push(`${what}: a HEAD response has a body`);
      return problems;
    }
    const content = response.content ?? {};
    if (!hasBody) {
      if (Object.keys(content).length > 0) problems.push(`${what}: the document promises a body (${Object.keys(content).join(', ')}) and there is none`);
      return problems;
    }
    const type = (header(exchange, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    // Media type ranges (OpenAPI 3.1, 4.8.14.1): the most specific key that covers the type (file downloads are */*).
    const media = content[type] ?? content[`${type.split('/')[0] ?? ''}/*`] ?? content['*/*'];
    if (media === undefined) return [...problems, `${what}: content type ${type || '(none)'} is not documented (${Object.keys(content).join(', ') || 'no body'})`];
    if (media.schema === undefined || !/json$/.test(type)) return problems;
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      return [...problems, `${what}: the body is not JSON`];
    }
    const schema = sparseFieldset(media.schema, url.searchParams, exchange.status, compiled.document);
    const errors = this.#validate(compiled, JSON.stringify(schema), schema, body);
    if (errors !== undefined) problems.push(`${what}: the body does not match ${describeSchema(media.schema)}: ${errors}\n  body: ${exchange.body.slice(0, 600)}`);
    return problems;
  }

  #route(path: string): { compiled: CompiledDocument; item: PathItemObject; template: string } | undefined {
    for (const compiled of this.#documents) {
      if (compiled.prefix !== '' && !path.startsWith(`${compiled.prefix}/`)) continue;
      const route = compiled.routes.find((r) => r.pattern.test(path));
      if (route !== undefined) return { compiled, item: route.item, template: route.template };
    }
    return undefined;
  }

  /** A problem document outside any operation (unknown path, 405): the generic problem schema. */
  #checkProblem(what: string, exchange: Exchange, code: string): string[] {
    const compiled = this.#documents[this.#documents.length - 1];
    if (compiled === undefined) return [];
    const type = (header(exchange, 'content-type') ?? '').split(';')[0];
    if (type !== 'application/problem+json') return [`${what}: a ${code} must be application/problem+json`];
    const schema = { type: 'object', allOf: [{ $ref: '#/components/schemas/restgraph.Problem' }], properties: { code: { const: code } } };
    const errors = this.#validate(compiled, `problem:${code}`, schema, JSON.parse(exchange.body));
    return errors === undefined ? [] : [`${what}: ${errors}`];
  }

  /** Validates `value` against a schema of the document (its refs resolved there); undefined when valid. */
  #validate(compiled: CompiledDocument, key: string, schema: SchemaObject, value: unknown): string | undefined {
    const cacheKey = `${compiled.id} ${key}`;
    let validate = this.#validators.get(cacheKey);
    if (validate === undefined) {
      validate = this.#ajv.compile(rewriteRefs(schema, compiled.id) as SchemaObject);
      this.#validators.set(cacheKey, validate);
    }
    if (validate(value)) return undefined;
    return this.#ajv.errorsText(validate.errors, { dataVar: 'body' });
  }
}

/** `#/components/schemas/X` → `<id>#/$defs/X`, so schemas compile against the registered components. */
function rewriteRefs(value: unknown, id: string): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${id}#/$defs/`).replaceAll('"#/$defs/', `"${id}#/$defs/`)) as unknown;
}

/**
 * With `fields=a,b` a record holds exactly those fields and the relations included: the record's
 * schema without its `required`, requiring the fields asked for instead, but for those the record
 * may be without (field access leaves out a field the caller may not read: it is not required there).
 */
function sparseFieldset(schema: SchemaObject, query: URLSearchParams, status: number, document: OpenApiDocument): SchemaObject {
  const fields = query.get('fields');
  if (fields === null || status !== 200) return schema;
  const include = (query.get('include')?.split(',') ?? []).map((n) => n.trim());
  const names = [...new Set([...fields.split(','), ...include].map((n) => n.trim()).filter((n) => n !== ''))];
  const sparse = (s: unknown): SchemaObject | undefined => {
    const target = (s as ReferenceObject | undefined)?.$ref;
    if (target?.startsWith('#/components/schemas/') !== true) return undefined;
    const record = resolve<SchemaObject>(document, { $ref: target });
    const optional = Object.keys((record.properties as Record<string, unknown> | undefined) ?? {}).filter((n) => !((record.required as string[] | undefined) ?? []).includes(n) && !include.includes(n));
    return { type: 'object', $ref: `${target}__sparse`, required: names.filter((n) => !optional.includes(n)) };
  };
  const apply = (s: SchemaObject): SchemaObject => {
    // A list that is an array or json-server's page envelope (`--compat json-server`): each way.
    if (Array.isArray(s.oneOf)) return { ...s, oneOf: s.oneOf.map((branch) => apply(branch as SchemaObject)) };
    const properties = s.properties as Record<string, SchemaObject> | undefined;
    const data = properties?.data;
    if (s.type === 'object' && data !== undefined) return { ...s, properties: { ...properties, data: apply(data) } };
    if (s.type === 'array') {
      const items = sparse(s.items);
      return items === undefined ? s : { ...s, items };
    }
    return sparse(s) ?? s;
  };
  return apply(schema);
}

function resolve<T>(document: OpenApiDocument, value: T | ReferenceObject): T {
  if (typeof value !== 'object' || value === null || !('$ref' in value)) return value;
  const [, kind, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(value.$ref) ?? [];
  const section = (document.components as unknown as Record<string, Record<string, T> | undefined>)[kind ?? ''];
  const found = section?.[name ?? ''];
  if (found === undefined) throw new Error(`unresolvable ${value.$ref}`);
  return found;
}

function header(exchange: Exchange, name: string): string | undefined {
  const value = exchange.headers[name.toLowerCase()];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function describeSchema(schema: SchemaObject): string {
  const own = schema.$ref;
  const items = (schema.items as Partial<ReferenceObject> | undefined)?.$ref;
  return typeof own === 'string' ? own : items === undefined ? 'its schema' : `an array of ${items}`;
}
