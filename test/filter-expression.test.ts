import { describe, expect, it } from 'vitest';
import { DEFAULT_FILTER_LIMITS, parseFilterExpression, readFilterExpression } from '../src/core/filter-expression/filter-parser.js';
import { matchesFilter } from '../src/core/filter-expression/filter-evaluator.js';
import { filterBoundsProblem, measureFilter } from '../src/core/filter-expression/filter-bounds.js';
import { InvalidQueryError } from '../src/errors.js';
import { resourceNamed } from '../src/schema/schema-model.js';
import { json, startTestApp } from './helpers/test-app.js';
import { filterSchema } from './helpers/filter-schema.js';

/**
 * The filter expression parser: the tree it builds, precedence, and every refusal with its offset;
 * hostile inputs (deep nesting, long or-chains, injection attempts, prototype names) are refused
 * within the limits, never with a crash or unbounded work.
 */

const schema = filterSchema();
const users = resourceNamed(schema, 'users');
const posts = resourceNamed(schema, 'posts');
const read = (text: string, limits = DEFAULT_FILTER_LIMITS): ReturnType<typeof readFilterExpression> => readFilterExpression(text, users, schema.resources, limits);
const problem = (text: string, limits = DEFAULT_FILTER_LIMITS): string => read(text, limits).problem ?? 'no problem';

describe('filter expression parser', () => {
  it('builds the checked tree: precedence not > and > or, typed values, relation paths', () => {
    expect(read("name = 'a' or not age < 3 and active = true").condition).toEqual({
      field: '', op: 'any', value: [
        { field: 'name', op: 'eq', value: 'a' },
        { field: '', op: 'all', value: [{ field: '', op: 'not', value: { field: 'age', op: 'lt', value: 3 } }, { field: 'active', op: 'eq', value: true }] },
      ],
    });
    expect(read("seen > '2024-01-01T01:00:00+01:00'").condition).toEqual({ field: 'seen', op: 'gt', value: '2024-01-01T00:00:00.000Z' });
    expect(read('email = null').condition).toEqual({ field: 'email', op: 'isNull', value: true });
    expect(read('email IS NOT NULL').condition).toEqual({ field: 'email', op: 'isNull', value: false });
    expect(read("name ~ \"it\\'s \\\"x\\\"\"").condition).toEqual({ field: 'name', op: 'containsIgnoringCase', value: 'it\'s "x"' });
    expect(read("posts.any(author.role in ('admin', 'editor'))").condition).toEqual({
      field: 'posts', op: 'some', value: { field: 'author', op: 'related', value: { field: 'role', op: 'in', value: ['admin', 'editor'] } },
    });
    expect(readFilterExpression('author.posts.none(views >= -1.5e1)', posts, schema.resources).problem).toBe('the number "-1.5e1" at 27 is not an integer');
  });

  it('refuses with the offset and what was expected', () => {
    expect(problem("nmae = 'x'")).toMatch(/^unknown field "nmae" at 0; fields of users: id, name, email, /);
    expect(problem('__proto__ = 1')).toMatch(/^unknown field "__proto__" at 0;/);
    expect(problem('constructor is null')).toMatch(/^unknown field "constructor" at 0;/);
    expect(problem('posts.toString(x = 1)')).toBe('"toString" at 6; expected any or none after "posts." (posts is a list of posts)');
    expect(problem('age = true')).toBe('"true" at 6 is not a value for age (integer); expected a number');
    expect(problem("role = 'boss'")).toBe('the string "boss" at 7 is not one of admin, editor, reader');
    expect(problem("born = '2023-02-30'")).toBe('the string "2023-02-30" at 7 is not a date (YYYY-MM-DD)');
    expect(problem("meta = '{}'")).toContain('operator "=" at 5 does not apply to json fields');
    expect(problem('age ~ 3')).toContain('operator "~" at 4 does not apply to integer fields; age (integer) takes =, !=, <, <=, >, >=, in, is null, is not null');
    expect(problem('age < null')).toBe('null at 6 cannot be compared with "<"; use "is null" or "is not null"');
    expect(problem("name = 'x' name = 'y'")).toBe('"name" at 11; expected "and", "or" or the end');
    expect(problem("(name = 'x'")).toBe('the end of the expression at 11; expected ")" to close the "(" at 0');
    expect(problem("name = 'x')")).toBe('")" at 10; expected no unclosed "(" before it');
    expect(problem('name # 1')).toBe('unexpected character "#" at 5');
    expect(problem("name = 'a\\q'")).toBe('unknown escape \\q at 9; expected one of \\\' \\" \\\\ \\n \\t \\r');
    expect(problem('')).toBe("is empty; expected a condition such as name = 'x'");
    expect(problem('age in ()')).toBe('")" at 8 is not a value for age (integer); expected a number');
    expect(problem('posts.any(author.posts.any(author.name = 1))')).toBe('"author" at 27 follows a relation more than 3 deep; at most 3 relations may be followed');
  });

  it('quote injection stays inside the string value', () => {
    expect(read("name = 'x'' or 1=1 --'").problem).toBe('the string " or 1=1 --" at 10; expected "and", "or" or the end');
    expect(read("name = 'x\\' or 1=1 --'").condition).toEqual({ field: 'name', op: 'eq', value: "x' or 1=1 --" });
  });

  it('hostile sizes are refused within the limits, without deep recursion', () => {
    const generous = { ...DEFAULT_FILTER_LIMITS, maxLength: 10_000_000 };
    expect(problem(`${'('.repeat(10_000)}age = 1${')'.repeat(10_000)}`, generous)).toBe('nests deeper than 8 levels at 8 (each "(", "not", any( and none( opens one)');
    expect(problem(`${'not '.repeat(10_000)}age = 1`, generous)).toContain('nests deeper than 8 levels at 32');
    expect(problem(Array.from({ length: 10_000 }, (_, i) => `age = ${i}`).join(' or '), generous)).toMatch(/^has more than 100 conditions \(the one at \d+ is one too many\)$/);
    expect(problem(`age in (${Array.from({ length: 101 }, (_, i) => i).join(',')})`)).toMatch(/^the list at 7 has more than 100 values/);
    expect(problem(`name = '${'x'.repeat(5000)}'`)).toBe('is 5009 characters long; at most 4096 are allowed');
    expect(problem(`name = '${'x'.repeat(100_000)}`, generous)).toBe("unterminated string starting at 7; expected a closing '");
  });

  it('parseFilterExpression throws a 400 invalid-query naming the parameter and offset', () => {
    const error = (() => {
      try {
        parseFilterExpression('age >', users, schema.resources);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidQueryError);
    expect((error as InvalidQueryError).status).toBe(400);
    expect((error as InvalidQueryError).message).toBe('filter: the end of the expression at 5 is not a value for age (integer); expected a number');
  });

  it('the evaluator: two-valued logic and Unicode folding on records as clients see them', () => {
    const match = (text: string, record: Record<string, unknown>): boolean => matchesFilter(parseFilterExpression(text, users, schema.resources), record, users);
    expect(match("name ~ 'élan'", { name: 'ÉLAN' })).toBe(true);
    expect(match('age > 3', { age: null })).toBe(false);
    expect(match('not age > 3', { age: null })).toBe(true);
    expect(match('age != 3', { age: null })).toBe(true);
    expect(match("name !~ 'x'", { name: null })).toBe(false);
    expect(match("seen < '2024-01-02'", { seen: '2024-01-01T23:59:59.999Z' })).toBe(true);
    expect(() => match("posts.any(title = 'x')", { id: 1 })).toThrow('relation posts cannot be followed here');
  });
});

describe('hostile filter= on REST: 4xx, never 5xx', () => {
  it('each hostile input is refused with a client error', async () => {
    const t = await startTestApp({ schema: filterSchema() });
    try {
      const inputs = [
        `${'('.repeat(3000)}age = 1${')'.repeat(3000)}`,
        Array.from({ length: 1000 }, () => 'age = 1').join(' or '),
        `name = '${'x'.repeat(5000)}'`,
        "name = 'x'' or 1=1 --'",
        '__proto__ = 1',
        'constructor.prototype = 1',
        "age = 'abc'",
        "name = 'unterminated",
        'not '.repeat(1000) + 'age = 1',
      ];
      for (const input of inputs) {
        const response = await t.app.inject({ method: 'GET', url: `/users?filter=${encodeURIComponent(input)}` });
        expect(response.statusCode, `${input.slice(0, 40)}: ${response.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode).toBeLessThan(500);
        if (input.length < 4000) expect(json<{ code: string }>(response).code).toBe('invalid-query');
      }
    } finally {
      await t.close();
    }
  });
});

describe('the limits are settings', () => {
  it('listLimits.maxFilterConditions, maxFilterDepth, maxFilterHops and maxFilterLength bound filter=', async () => {
    const t = await startTestApp({ schema: filterSchema(), listLimits: { maxFilterConditions: 2, maxFilterDepth: 1, maxFilterHops: 0, maxFilterLength: 30 } });
    try {
      const detail = async (expression: string): Promise<string> => {
        const response = await t.app.inject({ method: 'GET', url: `/users?filter=${encodeURIComponent(expression)}` });
        expect(response.statusCode, response.body).toBe(400);
        return json<{ errors: { detail: string }[] }>(response).errors[0]?.detail ?? '';
      };
      expect(await detail('age = 1 or age = 2 or age = 3')).toBe('has more than 2 conditions (the one at 22 is one too many)');
      expect(await detail('((age = 1))')).toBe('nests deeper than 1 levels at 1 (each "(", "not", any( and none( opens one)');
      expect(await detail('posts.any(views = 1)')).toBe('"posts" at 0 follows a relation more than 0 deep; at most 0 relations may be followed');
      expect(await detail(`name = '${'x'.repeat(30)}'`)).toBe('is 39 characters long; at most 30 are allowed');
      expect((await t.app.inject({ method: 'GET', url: `/users?filter=${encodeURIComponent('(age = 1 or age = 2)')}` })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('filter tree bounds (for trees built from typed input)', () => {
  it('measures comparisons, nesting and relation hops', () => {
    const condition = read("name = 'a' or not (age < 3 and posts.any(author.age > 1 and views = 2))").condition;
    expect(condition).toBeDefined();
    if (condition === undefined) return;
    expect(measureFilter(condition)).toEqual({ conditions: 4, depth: 6, hops: 2 });
    expect(filterBoundsProblem(condition, DEFAULT_FILTER_LIMITS)).toBeUndefined();
    expect(filterBoundsProblem(condition, { ...DEFAULT_FILTER_LIMITS, maxConditions: 3 })).toBe('has 4 conditions; at most 3 are allowed');
    expect(filterBoundsProblem(condition, { ...DEFAULT_FILTER_LIMITS, maxDepth: 5 })).toBe('nests 6 levels deep; at most 5 are allowed');
    expect(filterBoundsProblem(condition, { ...DEFAULT_FILTER_LIMITS, maxHops: 1 })).toBe('follows relations 2 deep; at most 1 are allowed');
  });
});
