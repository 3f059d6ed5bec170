import fc from 'fast-check';
import { ADMIN_SCOPE, type Principal } from '../../src/core/principal.js';

/**
 * Random access rules, rows and principals for the property test of access rules
 * (test/access-rules-property.test.ts), and a reference model of what a rule means written from
 * the documented semantics alone (docs/auth.md#rules), not from the rules code: a rule is a
 * three-valued (Kleene) formula whose comparisons with an absent credential value (no subject, a
 * missing or null claim, a value that does not convert to the field's type) are unknown, and a row
 * passes only when the whole rule is true. So an absent value makes its comparison fail, negated
 * or not, while a null field keeps the filter language's two-valued meaning (`=` false, `!=` true).
 */

export const RULE_FIELDS = `
      s: { type: string }
      n: { type: integer }
      b: { type: boolean }
      t: { type: datetime }
      owner: { type: string }
      org: { type: string }
      num: { type: integer }`;

type FieldName = 's' | 'n' | 'b' | 't' | 'owner' | 'org' | 'num';
type FieldType = 'string' | 'integer' | 'boolean' | 'datetime';
const TYPES: Record<FieldName, FieldType> = { s: 'string', n: 'integer', b: 'boolean', t: 'datetime', owner: 'string', org: 'string', num: 'integer' };

type Literal = string | number | boolean;
type Op = '=' | '!=' | '<' | '<=' | '>' | '>=' | '~' | '!~' | '^=';

/** A rule as the generator builds it: rendered to text for the server, evaluated by {@link truth}. */
export type Rule =
  | { kind: 'and' | 'or'; parts: Rule[] }
  | { kind: 'not'; part: Rule }
  | { kind: 'literal'; field: FieldName; op: Op; value: Literal }
  | { kind: 'isNull'; field: FieldName; negated: boolean }
  | { kind: 'inList'; field: FieldName; values: Literal[] }
  | { kind: 'reference'; field: FieldName; op: Op; reference: string }
  | { kind: 'inReference'; field: FieldName; reference: string }
  | { kind: 'test'; reference: string; op: '=' | '!='; literal: Literal }
  | { kind: 'has'; literal: Literal; reference: string };

export type Row = Record<string, unknown>;

/** What `@now` is in every case. */
export const NOW = '2024-03-01T00:00:00.000Z';
const TEXTS = ['u1', 'u2', '3', 'acme', 'Acme', 'ac', '', 'x'];
const DATETIMES = ['2024-01-01T00:00:00.000Z', '2024-06-30T12:30:00.000Z', '1999-12-31T23:59:59.999Z'];

const maybe = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arbitrary, { nil: null, freq: 4 });

export const rowArbitrary: fc.Arbitrary<Row> = fc.record({
  s: maybe(fc.constantFrom(...TEXTS)),
  n: maybe(fc.integer({ min: -2, max: 4 })),
  b: maybe(fc.boolean()),
  t: maybe(fc.constantFrom(...DATETIMES)),
  owner: maybe(fc.constantFrom('u1', 'u2', '3')),
  org: maybe(fc.constantFrom('acme', 'globex', '3')),
  num: maybe(fc.integer({ min: 1, max: 4 })),
});

function literalFor(type: FieldType): fc.Arbitrary<Literal> {
  switch (type) {
    case 'string':
      return fc.constantFrom(...TEXTS);
    case 'integer':
      return fc.integer({ min: -2, max: 4 });
    case 'boolean':
      return fc.boolean();
    case 'datetime':
      return fc.constantFrom(...DATETIMES, NOW);
  }
}

function opsFor(type: FieldType): Op[] {
  if (type === 'string') return ['=', '!=', '<', '<=', '>', '>=', '~', '!~', '^='];
  if (type === 'boolean') return ['=', '!='];
  return ['=', '!=', '<', '<=', '>', '>='];
}

/** References a field of each type may be compared with (the parser refuses the others). */
function referencesFor(type: FieldType): string[] {
  const claims = ['auth.claims.org', 'auth.claims.n', 'auth.claims.b', 'auth.claims.t', 'auth.claims.list', 'auth.claims.deep.org'];
  if (type === 'string') return ['auth.sub', 'auth.kind', ...claims];
  if (type === 'datetime') return ['auth.sub', 'now', ...claims];
  return ['auth.sub', ...claims];
}

const fieldName = fc.constantFrom<FieldName>('s', 'n', 'b', 't', 'owner', 'org', 'num');

const leaf: fc.Arbitrary<Rule> = fc.oneof(
  { weight: 3, arbitrary: fieldName.chain((field) => fc.tuple(fc.constantFrom(...opsFor(TYPES[field])), literalFor(TYPES[field])).map(([op, value]): Rule => ({ kind: 'literal', field, op, value }))) },
  { weight: 1, arbitrary: fc.tuple(fieldName, fc.boolean()).map(([field, negated]): Rule => ({ kind: 'isNull', field, negated })) },
  { weight: 1, arbitrary: fc.constantFrom<FieldName>('s', 'n', 'org', 'num').chain((field) => fc.array(literalFor(TYPES[field]), { minLength: 1, maxLength: 3 }).map((values): Rule => ({ kind: 'inList', field, values }))) },
  { weight: 5, arbitrary: fieldName.chain((field) => fc.tuple(fc.constantFrom(...opsFor(TYPES[field])), fc.constantFrom(...referencesFor(TYPES[field]))).map(([op, reference]): Rule => ({ kind: 'reference', field, op, reference }))) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom<FieldName>('s', 'owner', 'org', 'n', 'num', 't'), fc.constantFrom('auth.claims.list', 'auth.claims.org', 'auth.scopes')).map(([field, reference]): Rule => ({ kind: 'inReference', field, reference })) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('auth.claims.plan', 'auth.claims.n', 'auth.claims.org', 'auth.sub', 'auth.claims.deep.org'), fc.constantFrom<'=' | '!='>('=', '!='), fc.constantFrom<Literal>('pro', 'free', 3, '3', true, 'acme', 'u1')).map(([reference, op, literal]): Rule => ({ kind: 'test', reference, op, literal })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom<'=' | '!='>('=', '!='), fc.constantFrom('anonymous', 'key', 'jwt')).map(([op, literal]): Rule => ({ kind: 'test', reference: 'auth.kind', op, literal })) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom<Literal>('x', 'acme', 'u1', 3, '3', true), fc.constantFrom('auth.scopes', 'auth.claims.list', 'auth.claims.plan')).map(([literal, reference]): Rule => ({ kind: 'has', literal, reference })) },
);

/** A rule at most `depth` combinators deep. */
export function ruleArbitrary(depth: number): fc.Arbitrary<Rule> {
  if (depth === 0) return leaf;
  const sub = ruleArbitrary(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: sub.map((part): Rule => ({ kind: 'not', part })) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom<'and' | 'or'>('and', 'or'), fc.array(sub, { minLength: 2, maxLength: 3 })).map(([kind, parts]): Rule => ({ kind, parts })) },
  );
}

const CLAIMS = {
  org: ['acme', 'globex', 'u1', 3, null, { x: 1 }],
  n: [3, '3', 'abc', 2.5, true, -1, 1e21],
  b: [true, false, 'true', 1],
  t: ['2024-01-01T00:00:00.000Z', '2024-06-30T12:30:00.000Z', '2024-01-01', 12345, 'soon'],
  list: [[], ['acme', 'u1'], ['3', 3, 'x'], 'acme', [true, { a: 1 }], [1, 2], [null]],
  plan: ['pro', 'free', 3, ['pro']],
  deep: [{ org: 'acme' }, { org: 3 }, 'acme', [{ org: 'acme' }]],
} as const;

const claimsArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.record(
  Object.fromEntries(Object.entries(CLAIMS).map(([name, values]) => [name, fc.constantFrom<unknown>(...values)])) as Record<keyof typeof CLAIMS, fc.Arbitrary<unknown>>,
  { requiredKeys: [] },
);

/** A principal of any kind; claims of every JSON type, present or not; rarely an admin. */
export const principalArbitrary: fc.Arbitrary<Principal> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Principal>({ kind: 'anonymous', scopes: new Set(), credentialId: 'anonymous' }) },
  {
    weight: 6,
    arbitrary: fc
      .record({
        kind: fc.constantFrom<'jwt' | 'api-key'>('jwt', 'api-key'),
        subject: fc.option(fc.constantFrom('u1', 'u2', '3', 'acme'), { nil: undefined }),
        scopes: fc.subarray(['x', 'acme', '3']),
        claims: fc.option(claimsArbitrary, { nil: undefined, freq: 5 }),
        isAdmin: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
      })
      .map(({ kind, subject, scopes, claims, isAdmin }): Principal => ({
        kind,
        scopes: new Set(isAdmin ? [...scopes, ADMIN_SCOPE] : scopes),
        credentialId: `c-${subject ?? 'none'}`,
        ...(subject === undefined ? {} : { subject }),
        ...(claims === undefined ? {} : { claims }),
      })),
  },
);

function quote(value: Literal): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** The rule as text in the rule language. */
export function ruleText(rule: Rule): string {
  switch (rule.kind) {
    case 'and':
    case 'or':
      return rule.parts.map((part) => `(${ruleText(part)})`).join(` ${rule.kind} `);
    case 'not':
      return `not (${ruleText(rule.part)})`;
    case 'literal':
      return `${rule.field} ${rule.op} ${quote(rule.value)}`;
    case 'isNull':
      return `${rule.field} is ${rule.negated ? 'not ' : ''}null`;
    case 'inList':
      return `${rule.field} in (${rule.values.map(quote).join(', ')})`;
    case 'reference':
      return `${rule.field} ${rule.op} @${rule.reference}`;
    case 'inReference':
      return `${rule.field} in @${rule.reference}`;
    case 'test':
      return `@${rule.reference} ${rule.op} ${quote(rule.literal)}`;
    case 'has':
      return `${quote(rule.literal)} in @${rule.reference}`;
  }
}

// ---- The reference model ----

type Truth = 'T' | 'F' | 'U';
const ABSENT = Symbol('absent');
type Value = unknown;

/** The credential's value a reference names; ABSENT when it has none (null counts as none). */
function credentialValue(reference: string, principal: Principal, now: string): Value {
  const [root, member, ...path] = reference.split('.');
  if (root === 'now') return now;
  if (member === 'sub') return principal.subject ?? ABSENT;
  if (member === 'kind') return principal.kind === 'anonymous' ? 'anonymous' : principal.kind === 'jwt' ? 'jwt' : 'key';
  if (member === 'scopes') return [...principal.scopes];
  let value: unknown = principal.claims ?? ABSENT;
  for (const name of path) {
    if (value === ABSENT || typeof value !== 'object' || value === null || Array.isArray(value) || !(name in value)) return ABSENT;
    value = (value as Record<string, unknown>)[name];
  }
  return value === null || value === undefined ? ABSENT : value;
}

/** A credential value as a value of a field's type (the subject "3" is the integer 3), or ABSENT. */
function converted(type: FieldType, value: Value): Value {
  if (value === ABSENT) return ABSENT;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : ABSENT;
    case 'integer': {
      const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
      return text !== undefined && /^-?\d{1,16}$/.test(text) ? Number(text) : ABSENT;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : ABSENT;
    case 'datetime':
      if (typeof value !== 'string') return ABSENT;
      if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00.000Z`;
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) ? value : ABSENT;
  }
}

/** The text a credential value stands for in a text test (~, !~, ^=): a string, or a number's decimal text. */
function asText(value: Value): Value {
  return typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : ABSENT;
}

const truthOf = (b: boolean): Truth => (b ? 'T' : 'F');

/** A field's value compared with a given value (ABSENT: unknown), the filter language's null rules. */
function compare(field: unknown, op: Op, given: Value): Truth {
  if (given === ABSENT) return 'U';
  if (op === '!=') return truthOf(field === null || field !== given);
  if (field === null) return 'F';
  const [a, b] = [field as string | number | boolean, given as string | number | boolean];
  switch (op) {
    case '=':
      return truthOf(a === b);
    case '<':
      return truthOf(a < b);
    case '<=':
      return truthOf(a <= b);
    case '>':
      return truthOf(a > b);
    case '>=':
      return truthOf(a >= b);
    case '~':
      return truthOf(String(a).toLowerCase().includes(String(b).toLowerCase()));
    case '!~':
      return truthOf(!String(a).toLowerCase().includes(String(b).toLowerCase()));
    case '^=':
      return truthOf(String(a).startsWith(String(b)));
  }
}

/** A claim's value equals a rule's literal: same type and value, or a number and its decimal text. */
function sameLiteral(value: unknown, literal: Literal): boolean {
  if (typeof value === typeof literal) return value === literal;
  if (typeof value === 'number' && typeof literal === 'string') return String(value) === literal;
  if (typeof value === 'string' && typeof literal === 'number') return value === String(literal);
  return false;
}

function not(t: Truth): Truth {
  return t === 'U' ? 'U' : t === 'T' ? 'F' : 'T';
}

/** What `rule` is on `row` for `principal` (Kleene logic), by the documented semantics. */
export function truth(rule: Rule, row: Row, principal: Principal, now = NOW): Truth {
  switch (rule.kind) {
    case 'and': {
      const parts = rule.parts.map((p) => truth(p, row, principal, now));
      return parts.includes('F') ? 'F' : parts.includes('U') ? 'U' : 'T';
    }
    case 'or': {
      const parts = rule.parts.map((p) => truth(p, row, principal, now));
      return parts.includes('T') ? 'T' : parts.includes('U') ? 'U' : 'F';
    }
    case 'not':
      return not(truth(rule.part, row, principal, now));
    case 'literal':
      return compare(row[rule.field], rule.op, rule.value);
    case 'isNull':
      return truthOf((row[rule.field] === null) !== rule.negated);
    case 'inList':
      return truthOf(row[rule.field] !== null && rule.values.includes(row[rule.field] as Literal));
    case 'reference': {
      const given = credentialValue(rule.reference, principal, now);
      const type = TYPES[rule.field];
      return compare(row[rule.field], rule.op, rule.op === '~' || rule.op === '!~' || rule.op === '^=' ? asText(given) : converted(type, given));
    }
    case 'inReference': {
      const given = credentialValue(rule.reference, principal, now);
      if (given === ABSENT) return 'U';
      const values = (Array.isArray(given) ? given : [given]).map((v: unknown) => converted(TYPES[rule.field], v ?? ABSENT)).filter((v) => v !== ABSENT);
      if (values.length === 0) return 'U';
      return truthOf(row[rule.field] !== null && values.includes(row[rule.field]));
    }
    case 'test': {
      const value = credentialValue(rule.reference, principal, now);
      if (value === ABSENT || typeof value === 'object') return 'U';
      return truthOf(sameLiteral(value, rule.literal) === (rule.op === '='));
    }
    case 'has': {
      const value = credentialValue(rule.reference, principal, now);
      if (value === ABSENT) return 'U';
      return truthOf(Array.isArray(value) ? value.some((v) => sameLiteral(v, rule.literal)) : sameLiteral(value, rule.literal));
    }
  }
}

/** Whether the reference model lets `principal` see `row` under `rule`: admin sees every row. */
export function referencePasses(rule: Rule, row: Row, principal: Principal, now = NOW): boolean {
  return principal.scopes.has(ADMIN_SCOPE) || truth(rule, row, principal, now) === 'T';
}
