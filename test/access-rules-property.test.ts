import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAccessRules, passesRule, ruleFilter } from '../src/core/access-rules/access-rules.js';
import type { Principal } from '../src/core/principal.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { resourceNamed, type ResourceModel, type SchemaModel } from '../src/schema/schema-model.js';
import { openDatabase, type OpenedDatabase } from '../src/store/open-database.js';
import { RecordStore } from '../src/store/record-store.js';
import { json, startTestApp, type TestApp } from './helpers/test-app.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { NOW, principalArbitrary, referencePasses, ruleArbitrary, ruleText, rowArbitrary, RULE_FIELDS, type Row, type Rule } from './helpers/random-rules.js';

/**
 * Access rules (docs/auth.md#rules) hold the same answer three ways: random rules (and, or, not;
 * comparisons of every field type with literals and with @auth.sub, @auth.kind, @auth.claims.<name>
 * and @now; `in` an @auth list; credential tests) × random rows (nulls in every field) × random
 * principals (anonymous, API keys and JWTs, with and without a subject, claims missing, null or of
 * the wrong type, scopes, rarely an admin) select the same rows
 * - in SQL, on the suite's database: the store's list and count with the rule's `ruleFilter`, and
 *   through the app (REST lists with count=true, aggregates and single reads, with JWTs);
 * - in memory: `passesRule` (the evaluator over the instantiated rule), as events and writes apply it;
 * - in the reference model of test/helpers/random-rules.ts, written from the documented semantics.
 */

const SCHEMA = `
resources:
  items:
    access: { read: public, write: authenticated }
    fields:${RULE_FIELDS}
`;

/** The resource with `rule` as its list rule (read defaults to it), compiled and checked as at start. */
function withRule(schema: SchemaModel, resource: ResourceModel, text: string): ResourceModel {
  const variant: ResourceModel = { ...resource, rules: { list: text } };
  checkAccessRules({ ...schema, resources: new Map([[resource.name, variant]]) });
  return variant;
}

async function insertRows(t: TestApp, resource: string, rows: Row[]): Promise<Row[]> {
  for (const row of rows) {
    const response = await t.app.inject({ method: 'POST', url: `/${resource}`, payload: row });
    if (response.statusCode !== 201) throw new Error(response.body);
  }
  return json<Row[]>(await t.app.inject({ url: `/${resource}?limit=1000&sort=id` }));
}

describe('rules in SQL (the store), in memory and in the reference model', () => {
  const schema = parseSchemaText(SCHEMA);
  const items = resourceNamed(schema, 'items');
  let t: TestApp;
  let opened: OpenedDatabase;
  let store: RecordStore;
  let rows: Row[];

  beforeAll(async () => {
    t = await startTestApp({ schema });
    rows = await insertRows(t, 'items', fc.sample(rowArbitrary, { numRuns: 24, seed: 3501 }));
    opened = await openDatabase(t.db.url);
    store = new RecordStore(opened.db, opened.rules, (name) => resourceNamed(schema, name));
  });
  afterAll(async () => {
    await opened.db.close();
    await t.close();
  });

  /** How many checks selected some rows but not all: the property must not hold only trivially. */
  let partial = 0;
  let checks = 0;

  async function check(rule: Rule, principals: Principal[]): Promise<void> {
    const text = ruleText(rule);
    const variant = withRule(schema, items, text);
    for (const principal of principals) {
      const who = `${text} for ${JSON.stringify({ ...principal, scopes: [...principal.scopes] })}`;
      const expected = rows.filter((row) => referencePasses(rule, row, principal)).map((row) => row.id);
      const inMemory = rows.filter((row) => passesRule(principal, variant, 'list', row, NOW)).map((row) => row.id);
      expect(inMemory, `in memory: ${who}`).toEqual(expected);
      checks++;
      if (expected.length > 0 && expected.length < rows.length) partial++;
      const filter = ruleFilter(principal, variant, 'list', NOW);
      const filters = filter === undefined ? [] : [filter];
      const listed = await store.list(items, { filters, sort: [{ field: 'id', direction: 'asc' }], limit: 1000 });
      expect(listed.map((row) => row.id), `SQL: ${who}`).toEqual(expected);
      expect(await store.count(items, filters), `count: ${who}`).toBe(expected.length);
    }
  }

  it('agree on 300 random rules, each for 4 random principals', async () => {
    expect(rows).toHaveLength(24);
    await fc.assert(fc.asyncProperty(ruleArbitrary(3), fc.array(principalArbitrary, { minLength: 4, maxLength: 4 }), check), { numRuns: 300, seed: 3502 });
    expect(partial / checks).toBeGreaterThan(0.25);
  }, 120_000);

  it('hold edge cases the documented semantics name', async () => {
    const jwt = (subject: string | undefined, claims?: Record<string, unknown>): Principal => ({ kind: 'jwt', scopes: new Set(), credentialId: 'c', ...(subject === undefined ? {} : { subject }), ...(claims === undefined ? {} : { claims }) });
    const anonymous: Principal = { kind: 'anonymous', scopes: new Set(), credentialId: 'anonymous' };
    const cases: Rule[] = [
      // No subject: never equal, never unequal, not even to a null owner.
      { kind: 'reference', field: 'owner', op: '=', reference: 'auth.sub' },
      { kind: 'reference', field: 'owner', op: '!=', reference: 'auth.sub' },
      { kind: 'not', part: { kind: 'reference', field: 'owner', op: '=', reference: 'auth.sub' } },
      { kind: 'not', part: { kind: 'or', parts: [{ kind: 'reference', field: 'owner', op: '=', reference: 'auth.sub' }, { kind: 'isNull', field: 'owner', negated: false }] } },
      // The subject "3" is the integer 3; a claim that does not convert matches nothing.
      { kind: 'reference', field: 'num', op: '=', reference: 'auth.sub' },
      { kind: 'reference', field: 'num', op: '!=', reference: 'auth.claims.n' },
      { kind: 'inReference', field: 'org', reference: 'auth.claims.list' },
      { kind: 'test', reference: 'auth.claims.plan', op: '!=', literal: 'free' },
    ];
    const principals = [anonymous, jwt(undefined), jwt('3', { n: 'abc', list: [3, 'acme'], plan: null }), jwt('u1', { n: 3, list: 'acme', plan: 'pro' }), jwt('u2', { n: '3', list: [], plan: 'free' })];
    for (const rule of cases) await check(rule, principals);
    // Some rows do have a null owner, so the first cases prove something.
    expect(rows.some((row) => row.owner === null)).toBe(true);
  });
});

const RESOURCES = 16;

describe('rules through the app: REST lists, counts, aggregates and reads with JWTs', () => {
  const rules = fc.sample(ruleArbitrary(2), { numRuns: RESOURCES, seed: 3503 });
  const principals = fc.sample(principalArbitrary, { numRuns: 14, seed: 3504 });
  let t: TestApp;
  let rows: Row[];

  beforeAll(async () => {
    const resources = rules.map((rule, i) => `
  r${i}:
    singular: row${i}
    access: { read: public, write: authenticated }
    rules:
      list: ${JSON.stringify(ruleText(rule))}
    fields:${RULE_FIELDS}
`).join('');
    t = await startTestApp({ schema: parseSchemaText(`resources:${resources}`), jwt: { secret: RULES_JWT_SECRET } });
    const sample = fc.sample(rowArbitrary, { numRuns: 16, seed: 3505 });
    for (let i = 0; i < RESOURCES; i++) rows = await insertRows(t, `r${i}`, sample);
  });
  afterAll(async () => t.close());

  /** The Authorization header of a principal as a JWT (API keys' claims are tested in the store part). */
  async function authorization(principal: Principal): Promise<string> {
    if (principal.kind === 'anonymous') return '';
    const payload: Record<string, unknown> = { ...principal.claims, scope: [...principal.scopes].join(' ') };
    if (principal.subject !== undefined) payload.sub = principal.subject;
    return bearerJwt(payload);
  }

  it('lists, counts, aggregates and reads exactly the rows the reference model lets each principal see', async () => {
    expect(principals.length).toBeGreaterThan(8);
    let partial = 0;
    for (const [i, rule] of rules.entries()) {
      for (const principal of principals) {
        // As a JWT: its kind is jwt, whatever the generator said.
        const asJwt: Principal = principal.kind === 'anonymous' ? principal : { ...principal, kind: 'jwt' };
        const headers = { authorization: await authorization(asJwt) };
        const who = `${ruleText(rule)} for ${JSON.stringify({ ...asJwt, scopes: [...asJwt.scopes] })}`;
        const now = new Date().toISOString();
        const expected = rows.filter((row) => referencePasses(rule, row, asJwt, now)).map((row) => row.id);
        if (expected.length > 0 && expected.length < rows.length) partial++;
        const list = await t.app.inject({ url: `/r${i}?count=true&limit=1000&sort=id`, headers });
        expect(list.statusCode, list.body).toBe(200);
        expect(json<Row[]>(list).map((row) => row.id), who).toEqual(expected);
        expect(list.headers['x-total-count'], who).toBe(String(expected.length));
        const aggregate = await t.app.inject({ url: `/r${i}/aggregate?groupBy=b&count=true`, headers });
        expect(aggregate.statusCode, aggregate.body).toBe(200);
        const counted = json<{ count: number }[]>(aggregate).reduce((sum, group) => sum + group.count, 0);
        expect(counted, `aggregate: ${who}`).toBe(expected.length);
        for (const row of rows.slice(0, 4)) {
          const read = await t.app.inject({ url: `/r${i}/${String(row.id)}`, headers });
          expect(read.statusCode, `read ${String(row.id)}: ${who}`).toBe(expected.includes(row.id) ? 200 : 404);
        }
      }
    }
    // Some rows but not all, in a tenth of the cases at least: the answers are not all trivial.
    expect(partial).toBeGreaterThan((RESOURCES * principals.length) / 10);
  }, 120_000);
});
