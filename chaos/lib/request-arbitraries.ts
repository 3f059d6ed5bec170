import fc from 'fast-check';
import { valueFor, type KnownData, type Operation, type Parameter } from './openapi-operations.js';

/**
 * Requests built from the operations of an OpenAPI document: mostly valid ones, and ones whose
 * path, query, headers, body or method are mutated (wrong types, huge or deep values, unknown
 * fields, broken JSON, odd headers). Each request names what was mutated.
 */
export interface FuzzRequest {
  method: string;
  /** Path and query string, ready to send. */
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  /** What was mutated (empty: a valid request). */
  mutations: string[];
}

/** A piece of a request, and whether it was mutated. */
interface Part<T> {
  value: T;
  mutation: string | undefined;
}

const valid = <T>(value: T): Part<T> => ({ value, mutation: undefined });
const mutated = <T>(mutation: string, value: T): Part<T> => ({ value, mutation });

/** A mutated piece one time in `every` (weights: valid `every - 1`, mutated 1). */
function sometimes<T>(every: number, good: fc.Arbitrary<Part<T>>, bad: fc.Arbitrary<Part<T>>): fc.Arbitrary<Part<T>> {
  return fc.oneof({ weight: every - 1, arbitrary: good }, { weight: 1, arbitrary: bad });
}

/** Requests for every operation of `operations`, `adminToken` being the credential of most. */
export function requestArbitrary(operations: readonly Operation[], known: KnownData, adminToken: string): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...operations).chain((op) =>
    fc
      .record({
        method: sometimes(12, fc.constant(valid(op.method)), fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND').map((m) => mutated('method', m))),
        path: pathFor(op, known),
        query: queryFor(op, known),
        headers: headersFor(op, adminToken),
        body: bodyFor(op, known),
      })
      .map(({ method, path, query, headers, body }) => ({
        method: method.value,
        path: query.value === '' ? path.value : `${path.value}?${query.value}`,
        headers: { ...headers.value, ...(body.value === undefined ? {} : { 'content-type': contentTypeOf(op, headers.value) }) },
        body: body.value,
        mutations: [method, path, query, headers, body].flatMap((p) => (p.mutation === undefined ? [] : [p.mutation])),
      })),
  );
}

function contentTypeOf(op: Operation, headers: Record<string, string>): string {
  return headers['content-type'] ?? op.body?.contentTypes[0] ?? 'application/json';
}

// ---- path ----------------------------------------------------------------------------------------

const ODD_SEGMENTS = ['0', '-1', '1.5', '1e3', '0x10', 'abc', 'null', 'true', '%20', '%00', '%2e%2e', '..%2F..%2Fetc', '%F0%9F%98%80', '%zz', '9007199254740993', '99999999999999999999999999'];

function pathFor(op: Operation, known: KnownData): fc.Arbitrary<Part<string>> {
  const names = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
  if (names.length === 0) return fc.constant(valid(op.path));
  const segment = sometimes(
    5,
    fc.constantFrom(...known.ids).map((id) => valid(String(id))),
    fc.oneof(fc.constantFrom(...ODD_SEGMENTS), fc.string({ maxLength: 30 }).map(encodeURIComponent), fc.constant('9'.repeat(300))).map((s) => mutated('path', s)),
  );
  return fc.array(segment, { minLength: names.length, maxLength: names.length }).map((segments) => {
    let path = op.path;
    names.forEach((name, i) => (path = path.replace(`{${name}}`, segments[i]?.value ?? '1')));
    return { value: path, mutation: segments.find((s) => s.mutation !== undefined)?.mutation };
  });
}

// ---- query ---------------------------------------------------------------------------------------

/** Sent as they are: a broken percent-encoding is meant, raw bytes beyond ASCII are not (not HTTP). */
const ODD_VALUES = ['', 'abc', '-1', '0', '1e309', 'NaN', 'true', 'null', '[]', '{}', '%zz', '%', '%00', '%C0%AF', '%C3%A9', '%FF', ',,,', 'a,b,c', '9'.repeat(400)];

function queryFor(op: Operation, known: KnownData): fc.Arbitrary<Part<string>> {
  const parameters = op.parameters.filter((p) => p.in === 'query');
  const good = parameters.length === 0 ? fc.constant(valid('')) : fc.subarray(parameters, { maxLength: Math.min(4, parameters.length) }).chain((chosen) => queryPairs(chosen, known));
  const odd = fc
    .array(
      fc.oneof(
        // A known parameter with a value of the wrong type or shape, sent raw (encoding broken on purpose).
        ...(parameters.length === 0 ? [] : [fc.tuple(fc.constantFrom(...parameters.map((p) => encodeURIComponent(p.name))), fc.constantFrom(...ODD_VALUES))]),
        fc.tuple(fc.constantFrom('limit', 'offset', 'after', 'sort', 'fields', 'include', 'count', 'name[regex]', 'id[in]', 'a[b][c]', '__proto__', 'constructor[prototype]', 'x'.repeat(300)), fc.constantFrom(...ODD_VALUES)),
        fc.tuple(fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent), fc.string({ maxLength: 20 }).map(encodeURIComponent)),
        forgedCursor().map((cursor) => ['after', cursor] as [string, string]),
      ),
      { minLength: 1, maxLength: 6 },
    )
    .map((pairs) => mutated('query', pairs.map(([k, v]) => `${k}=${v}`).join('&')));
  const sortKeys = parameters.find((p) => p.name === 'sort')?.schema.items?.enum?.map(String) ?? [];
  if (sortKeys.length === 0) return sometimes(3, good, odd);
  return fc.oneof({ weight: 6, arbitrary: good }, { weight: 2, arbitrary: odd }, { weight: 2, arbitrary: cursorForSort(sortKeys) });
}

/**
 * A sort and a cursor made for exactly that sort (as the server's own would be) whose values are
 * of any type: only a check of each value against its field's type stands between it and the SQL.
 */
function cursorForSort(sortKeys: readonly string[]): fc.Arbitrary<Part<string>> {
  return fc
    .subarray([...sortKeys], { minLength: 1, maxLength: Math.min(2, sortKeys.length) })
    .filter((keys) => new Set(keys.map((k) => k.replace(/^-/, ''))).size === keys.length)
    .chain((keys) => {
      const spec = keys.some((k) => k.replace(/^-/, '') === 'id') ? keys : [...keys, 'id'];
      const value = fc.oneof({ weight: 3, arbitrary: fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null)) }, fc.jsonValue({ maxDepth: 1 }));
      return fc.array(value, { minLength: spec.length, maxLength: spec.length }).map((values) => {
        const cursor = Buffer.from(JSON.stringify({ s: spec.join(','), v: values })).toString('base64url');
        return mutated('query: forged cursor', `sort=${encodeURIComponent(keys.join(','))}&after=${cursor}`);
      });
    });
}

function queryPairs(chosen: readonly Parameter[], known: KnownData): fc.Arbitrary<Part<string>> {
  if (chosen.length === 0) return fc.constant(valid(''));
  return fc.tuple(...chosen.map((p) => queryValue(p, known))).map((values) => valid(chosen.map((p, i) => `${encodeURIComponent(p.name)}=${encodeURIComponent(values[i] ?? '')}`).join('&')));
}

function queryValue(parameter: Parameter, known: KnownData): fc.Arbitrary<string> {
  const schema = parameter.schema;
  if (parameter.name === 'after') return fc.oneof(forgedCursor(), fc.base64String({ maxLength: 40 }).map((s) => s.replace(/[+/=]/g, '')));
  if (schema.type === 'array') {
    const enumValues = schema.items?.enum;
    if (enumValues !== undefined && enumValues.length > 0) return fc.subarray(enumValues.map(String), { minLength: 1 }).map((v) => v.join(','));
    return fc.array(valueFor(schema.items ?? {}, known, parameter.name), { minLength: 1, maxLength: 5 }).map((v) => v.map(String).join(','));
  }
  return valueFor(schema, known, parameter.name).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/** A well-formed cursor (base64url JSON) holding values of any type: the server must refuse it, not fail. */
function forgedCursor(): fc.Arbitrary<string> {
  return fc
    .record({ s: fc.constantFrom('createdAt,id', 'id', 'name,id', '-updatedAt,id', 'price,id', 'nope'), v: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }) })
    .map((cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url'));
}

// ---- headers -------------------------------------------------------------------------------------

/** Header values Node.js lets a client send (printable ASCII, Latin-1 above it). */
const headerText = fc.string({ maxLength: 60 }).filter((s) => /^[\x20-\x7e]*$/.test(s));

function headersFor(op: Operation, adminToken: string): fc.Arbitrary<Part<Record<string, string>>> {
  const authorization = fc.oneof(
    { weight: 12, arbitrary: fc.constant(valid(`Bearer ${adminToken}`)) },
    fc.constantFrom('', 'Bearer', 'Bearer ', 'Bearer garbage', 'Basic dXNlcjpwdw==', 'Bearer a.b.c', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', `bearer ${adminToken}`, `Bearer  ${adminToken}`, `Bearer ${'x'.repeat(5000)}`).map((v) => mutated('authorization', v)),
  );
  const optional = (name: string, values: readonly string[]): fc.Arbitrary<Part<Record<string, string>>> =>
    fc.oneof({ weight: 6, arbitrary: fc.constant(valid({})) }, fc.oneof(fc.constantFrom(...values), headerText).map((v) => mutated(name, { [name]: v })));
  const contentType = op.body === undefined ? fc.constant(valid({})) : optional('content-type', ['application/json', 'application/merge-patch+json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'application/vnd.api+json', 'application/json, text/plain', '', '*/*']);
  return fc
    .tuple(
      authorization,
      contentType,
      optional('accept', ['*/*', 'application/json', 'application/problem+json', 'text/html', 'application/xml', 'text/event-stream', 'application/json;q=0', '*/*;q=abc', 'image/*', ';;;']),
      optional('if-match', ['*', '"abc"', 'W/"abc"', 'garbage', '"a", "b"', `"${'x'.repeat(2000)}"`]),
      optional('if-none-match', ['*', '"abc"', 'W/"abc"', 'garbage', `"${'x'.repeat(2000)}"`]),
      optional('idempotency-key', ['fuzz-key-1', 'fuzz-key-2', '', '"quoted"', 'x'.repeat(256), '\u00e9']),
      optional('last-event-id', ['0', '-1', 'abc', '99999999999999999999']),
      optional('x-forwarded-for', ['1.2.3.4', '::1', 'garbage', '1.2.3.4, 5.6.7.8']),
      optional('range', ['bytes=0-10', 'bytes=abc']),
    )
    .map(([auth, ...rest]) => {
      const headers: Record<string, string> = auth.value === '' ? {} : { authorization: auth.value };
      for (const part of rest) Object.assign(headers, part.value);
      // Latin-1 is what Node.js sends of a header value: keep it to that.
      for (const [name, value] of Object.entries(headers)) headers[name] = value.replace(/[^\x20-\xff]/g, '?');
      return { value: headers, mutation: [auth, ...rest].flatMap((p) => (p.mutation === undefined ? [] : [p.mutation])).join(',') || undefined };
    });
}

// ---- body ----------------------------------------------------------------------------------------

const BROKEN_JSON = ['{', '{"name":', '{"name": "x",}', "{'name':'x'}", 'NaN', '', 'null', '[]', '"text"', '123', 'true', '\uFEFF{"name":"x"}', '{"name":"x"}garbage', '{"a":1e999999}', '{"name":"\\ud800"}', '{"name":"x","name":"y"}', '[{"name":"x"}]'];

function bodyFor(op: Operation, known: KnownData): fc.Arbitrary<Part<string | Buffer | undefined>> {
  if (op.body === undefined) {
    // Now and then a body where none belongs.
    return fc.oneof({ weight: 15, arbitrary: fc.constant(valid(undefined)) }, fc.constantFrom('{"x":1}', 'garbage').map((b) => mutated('unexpected body', b)));
  }
  const shape = valueFor(op.body.schema, known);
  const record = shape.map((v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}));
  return fc.oneof(
    { weight: 8, arbitrary: shape.map((v) => valid(JSON.stringify(v))) },
    {
      weight: 3,
      arbitrary: fc.tuple(record, fc.jsonValue({ maxDepth: 2 }), fc.nat()).map(([value, wrong, pick]) => {
        const keys = Object.keys(value);
        const key = keys.length === 0 ? 'name' : (keys[pick % keys.length] ?? 'name');
        return mutated('body: wrong type', JSON.stringify({ ...value, [key]: wrong }));
      }),
    },
    { weight: 2, arbitrary: fc.tuple(record, fc.dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })).map(([value, extra]) => mutated('body: unknown fields', JSON.stringify({ ...extra, ...value }))) },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...BROKEN_JSON), fc.string({ maxLength: 40 })).map((b) => mutated('body: broken JSON', b)) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(10, 63, 64, 65, 200, 5000, 100_000), fc.boolean()).map(([depth, arrays]) => mutated(`body: ${depth} levels deep`, deep(depth, arrays))) },
    { weight: 1, arbitrary: fc.tuple(record, fc.constantFrom(10_000, 500_000, 1_000_000, 1_100_000)).map(([value, size]) => mutated(`body: ${size}-character string`, JSON.stringify({ ...value, name: 'x'.repeat(size) }))) },
    { weight: 1, arbitrary: fc.constantFrom(50_000, 200_000).map((n) => mutated(`body: ${n} fields`, JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]))))) },
    { weight: 1, arbitrary: fc.constant(mutated('body: prototype keys', '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"name":"proto","title":"proto"}')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => mutated('body: bytes', Buffer.from(bytes))) },
    { weight: 1, arbitrary: fc.constantFrom('1e308', '-0', '9007199254740993', '1.5', '-1e21', '1e400').map((n) => mutated('body: odd numbers', `{"name":"n","title":"t","userId":${n},"quantity":${n},"price":${n},"stock":${n},"productId":${n}}`)) },
  );
}

/** JSON nested `depth` levels: `[[[…]]]` or `{"a":{"a":…}}`, built as text. */
function deep(depth: number, arrays: boolean): string {
  return arrays ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
