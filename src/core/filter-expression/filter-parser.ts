import { InvalidQueryError } from '../../errors.js';
import { relationJoin } from '../../schema/relation-keys.js';
import { canonicalFields, type FieldModel, type RelationModel, type ResourceModel } from '../../schema/schema-model.js';
import type { FilterCondition, QueryOperator } from '../../store/list-spec.js';
import { OPERATORS_BY_TYPE, parseFilterValue } from '../filter-values.js';
import { FilterSyntaxError, tokenize, type Token } from './filter-lexer.js';
import { AuthReference, isPlainFilter, referenceProblem, type AuthTest, type RuleCondition } from './auth-references.js';

/**
 * Filter expressions (`filter=author.name ~ 'al' and (published = true or views >= 100)`): parsed
 * by recursive descent and checked against the schema in the same pass, into one checked
 * {@link FilterCondition} tree. The grammar, operators per type and limits are in
 * docs/list-queries.md#filter-expressions.
 *
 * ```text
 * expression := and ("or" and)*
 * and        := unary ("and" unary)*
 * unary      := "not" unary | "(" expression ")" | test
 * test       := field comparison
 *             | belongsTo "." test
 *             | hasMany "." ("any" | "none") "(" expression ")"
 * comparison := ("=" | "!=" | "<" | "<=" | ">" | ">=" | "~" | "!~" | "^=") value
 *             | "in" "(" value ("," value)* ")" | "is" ["not"] "null"
 * value      := number | 'text' | "text" | true | false | null
 * ```
 */

/** Bounds on one filter expression; each refusal is a 400 invalid-query. */
export interface FilterLimits {
  /** Most comparisons in one expression. @default 100 */
  maxConditions: number;
  /** Most levels of nesting: each parenthesised group, each `not`, each `any(…)`/`none(…)` opens one. @default 8 */
  maxDepth: number;
  /** Most relations followed from the listed resource to a compared field. @default 3 */
  maxHops: number;
  /** Longest expression, in characters. @default 4096 */
  maxLength: number;
  /** Most values in one `in (…)`. @default 100 */
  maxInValues: number;
}

export const DEFAULT_FILTER_LIMITS: Readonly<FilterLimits> = Object.freeze({ maxConditions: 100, maxDepth: 8, maxHops: 3, maxLength: 4096, maxInValues: 100 });

/** The resources relation paths may lead to, by name (the schema's `resources`). */
export type FilterResources = ReadonlyMap<string, ResourceModel>;

/** What a filter expression means, or what is wrong with it and where (a character offset). */
export type FilterReading = { condition: FilterCondition; problem?: undefined } | { condition?: undefined; problem: string; offset: number };

/**
 * Reads a filter expression over `resource`: its checked condition, or its first problem with the
 * character offset where it is. Never throws for any input; work and recursion are bounded by `limits`.
 */
export function readFilterExpression(text: string, resource: ResourceModel, resources: FilterResources | undefined, limits: FilterLimits = DEFAULT_FILTER_LIMITS): FilterReading {
  if (text.length > limits.maxLength) return { problem: `is ${text.length} characters long; at most ${limits.maxLength} are allowed`, offset: limits.maxLength };
  try {
    const condition = new FilterParser(tokenize(text), resources, limits, false).parse(resource);
    if (!isPlainFilter(condition)) throw new Error('a filter without references holds one');
    return { condition };
  } catch (error) {
    if (error instanceof FilterSyntaxError) return { problem: error.message, offset: error.offset };
    throw error;
  }
}

/** What an access rule means (a filter expression that may name the credential's values), or its first problem. */
export type RuleReading = { rule: RuleCondition; problem?: undefined } | { rule?: undefined; problem: string; offset: number };

/**
 * Reads an access rule over `resource` (docs/auth.md#rules): a filter expression whose values may
 * be references (`authorId = @auth.sub`), with tests of the credential alone (`'x' in @auth.scopes`,
 * `@auth.kind = 'jwt'`). Relation paths are not allowed: a rule decides on the record's own fields,
 * so it has the same answer in SQL and on an event's row. Never throws for any input.
 */
export function readRuleExpression(text: string, resource: ResourceModel, limits: FilterLimits = DEFAULT_FILTER_LIMITS): RuleReading {
  if (text.length > limits.maxLength) return { problem: `is ${text.length} characters long; at most ${limits.maxLength} are allowed`, offset: limits.maxLength };
  try {
    return { rule: new FilterParser(tokenize(text), undefined, limits, true).parse(resource) };
  } catch (error) {
    if (error instanceof FilterSyntaxError) return { problem: error.message, offset: error.offset };
    throw error;
  }
}

/**
 * {@link readFilterExpression}, throwing its problem.
 * @throws InvalidQueryError naming `parameter`, the offset and what was expected
 * @example parseFilterExpression("name ~ 'al' and age >= 18", users, schema.resources)
 */
export function parseFilterExpression(text: string, resource: ResourceModel, resources: FilterResources | undefined, limits: FilterLimits = DEFAULT_FILTER_LIMITS, parameter = 'filter'): FilterCondition {
  const reading = readFilterExpression(text, resource, resources, limits);
  if (reading.problem === undefined) return reading.condition;
  throw new InvalidQueryError(`${parameter}: ${reading.problem}`, { errors: [{ parameter, detail: reading.problem, offset: reading.offset }] });
}

const COMPARISONS: ReadonlyMap<string, QueryOperator> = new Map([
  ['=', 'eq'], ['!=', 'ne'], ['<', 'lt'], ['<=', 'lte'], ['>', 'gt'], ['>=', 'gte'], ['~', 'contains'], ['!~', 'contains'], ['^=', 'startsWith'],
]);
/** The symbols of each query operator, to say what a field takes. */
const SYMBOLS: Readonly<Record<QueryOperator, string>> = {
  eq: '=', ne: '!=', lt: '<', lte: '<=', gt: '>', gte: '>=', in: 'in', contains: '~, !~', startsWith: '^=', isNull: 'is null, is not null',
};

class FilterParser {
  readonly #tokens: Token[];
  readonly #resources: FilterResources | undefined;
  readonly #limits: FilterLimits;
  /** Access rules: references (`@auth.sub`) are values, credential tests are conditions; no relation paths. */
  readonly #rule: boolean;
  #at = 0;
  #depth = 0;
  #conditions = 0;

  constructor(tokens: Token[], resources: FilterResources | undefined, limits: FilterLimits, rule: boolean) {
    this.#tokens = tokens;
    this.#resources = resources;
    this.#limits = limits;
    this.#rule = rule;
  }

  parse(resource: ResourceModel): RuleCondition {
    if (this.#peek().kind === 'end') throw new FilterSyntaxError('is empty; expected a condition such as name = \'x\'', 0);
    const condition = this.#or(resource, 0);
    const rest = this.#peek();
    if (rest.kind !== 'end') throw this.#unexpected(rest, rest.text === ')' ? 'no unclosed "(" before it' : '"and", "or" or the end');
    return condition;
  }

  #or(resource: ResourceModel, hops: number): RuleCondition {
    const parts = [this.#and(resource, hops)];
    while (this.#isKeyword(this.#peek(), 'or')) {
      this.#at++;
      parts.push(this.#and(resource, hops));
    }
    return parts.length === 1 ? (parts[0] as RuleCondition) : { field: '', op: 'any', value: parts };
  }

  #and(resource: ResourceModel, hops: number): RuleCondition {
    const parts = [this.#unary(resource, hops)];
    while (this.#isKeyword(this.#peek(), 'and')) {
      this.#at++;
      parts.push(this.#unary(resource, hops));
    }
    return parts.length === 1 ? (parts[0] as RuleCondition) : { field: '', op: 'all', value: parts };
  }

  #unary(resource: ResourceModel, hops: number): RuleCondition {
    const token = this.#next();
    if (this.#isKeyword(token, 'not')) {
      this.#open(token);
      const inner = this.#unary(resource, hops);
      this.#depth--;
      return { field: '', op: 'not', value: inner };
    }
    if (token.text === '(' && token.kind === 'punctuation') {
      this.#open(token);
      const inner = this.#or(resource, hops);
      this.#expect(')', `")" to close the "(" at ${token.offset}`);
      this.#depth--;
      return inner;
    }
    if (this.#rule && (token.kind === 'reference' || (token.kind !== 'name' && token.kind !== 'punctuation' && token.kind !== 'end') || this.#isLiteralWord(token))) return this.#authTest(token);
    if (token.kind === 'reference') throw new FilterSyntaxError(`the reference "@${token.text}" at ${token.offset} can only be used in access rules`, token.offset);
    if (token.kind !== 'name' || this.#isKeyword(token, 'and') || this.#isKeyword(token, 'or')) throw this.#unexpected(token, 'a field name, "not" or "("');
    return this.#test(resource, hops, token);
  }

  /** `true`, `false` or `null` (the start of a credential test in a rule, not a field). */
  #isLiteralWord(token: Token): boolean {
    return this.#isKeyword(token, 'true') || this.#isKeyword(token, 'false');
  }

  /** A test of the credential alone, in a rule: `'x' in @auth.scopes`, `@auth.kind = 'jwt'`, `@auth.claims.plan != 'free'`. */
  #authTest(first: Token): RuleCondition {
    this.#conditions++;
    if (this.#conditions > this.#limits.maxConditions) throw new FilterSyntaxError(`has more than ${this.#limits.maxConditions} conditions (the one at ${first.offset} is one too many)`, first.offset);
    let test: AuthTest;
    if (first.kind === 'reference') {
      const reference = this.#reference(first);
      const op = this.#next();
      if (op.kind !== 'operator' || (op.text !== '=' && op.text !== '!=')) throw this.#unexpected(op, `"=" or "!=" after ${first.text === 'auth.scopes' ? '' : '@'}${first.text} (a value of the credential is compared with a literal)`);
      if (reference.name === 'auth.scopes') throw new FilterSyntaxError(`@auth.scopes at ${first.offset} is a list; test it with 'scope' in @auth.scopes`, first.offset);
      test = { reference, op: op.text === '=' ? 'eq' : 'ne', literal: this.#literal(this.#next()) };
      if (reference.name === 'auth.kind' && !['anonymous', 'key', 'jwt'].includes(String(test.literal))) {
        throw new FilterSyntaxError(`@auth.kind at ${first.offset} is one of 'anonymous', 'key', 'jwt'; ${JSON.stringify(test.literal)} is none of them`, first.offset);
      }
    } else {
      const literal = this.#literal(first);
      const keyword = this.#next();
      if (!this.#isKeyword(keyword, 'in')) throw this.#unexpected(keyword, '"in" and @auth.scopes or an @auth.claims list after a value (a rule tests fields by name)');
      const target = this.#next();
      if (target.kind !== 'reference') throw this.#unexpected(target, '@auth.scopes or an @auth.claims list after "in"');
      const reference = this.#reference(target);
      if (reference.name !== 'auth.scopes' && reference.path[1] !== 'claims') throw new FilterSyntaxError(`"in" at ${keyword.offset} needs a list: @auth.scopes or an @auth.claims list, not @${reference.name}`, target.offset);
      test = { reference, op: 'has', literal };
    }
    return { field: '', op: 'authTest', value: test };
  }

  #literal(token: Token): string | number | boolean {
    if (token.kind === 'string') return token.text;
    if (token.kind === 'number' && Number.isFinite(Number(token.text))) return Number(token.text);
    if (this.#isLiteralWord(token)) return token.text.toLowerCase() === 'true';
    throw this.#unexpected(token, 'a quoted text, a number, true or false');
  }

  /** A checked reference token. */
  #reference(token: Token): AuthReference {
    const path = token.text.split('.');
    const problem = referenceProblem(path);
    if (problem !== undefined) throw new FilterSyntaxError(`@${token.text} at ${token.offset} ${problem}`, token.offset);
    return new AuthReference(path, token.offset);
  }

  /** `name …` where name is a field or a relation of `resource`. */
  #test(resource: ResourceModel, hops: number, name: Token): RuleCondition {
    const field = resource.fields.get(name.text);
    if (field !== undefined) return this.#comparison(resource, field, name);
    const relation = resource.relations.get(name.text);
    if (this.#rule && relation !== undefined) {
      throw new FilterSyntaxError(`"${name.text}" at ${name.offset} is a relation; a rule tests the record's own fields (compare ${relation.kind === 'belongsTo' ? relation.foreignKey : 'a field'} instead)`, name.offset);
    }
    const target = relation === undefined ? undefined : this.#resources?.get(relation.target);
    if (relation === undefined || target === undefined) throw this.#unknownName(resource, name);
    if (relationJoin(resource, relation) === undefined) {
      throw new FilterSyntaxError(`"${name.text}" at ${name.offset} is a relation of a composite foreign key, which a filter cannot follow yet`, name.offset);
    }
    if (hops + 1 > this.#limits.maxHops) throw new FilterSyntaxError(`"${name.text}" at ${name.offset} follows a relation more than ${this.#limits.maxHops} deep; at most ${this.#limits.maxHops} relations may be followed`, name.offset);
    this.#expect('.', relation.kind === 'belongsTo' ? `"." and a field of ${target.name} after the relation "${relation.name}"` : `".any(…)" or ".none(…)" after the relation "${relation.name}"`);
    const next = this.#next();
    if (relation.kind === 'belongsTo') {
      if (next.kind !== 'name') throw this.#unexpected(next, `a field of ${target.name}`);
      return { field: relation.name, op: 'related', value: this.#test(target, hops + 1, next) };
    }
    return this.#quantified(relation, target, hops + 1, next);
  }

  /** `posts.any(…)` / `posts.none(…)`, after the dot. */
  #quantified(relation: RelationModel, target: ResourceModel, hops: number, word: Token): RuleCondition {
    const quantifier = word.kind === 'name' ? word.text.toLowerCase() : '';
    if (quantifier !== 'any' && quantifier !== 'none') throw this.#unexpected(word, `any or none after "${relation.name}." (${relation.name} is a list of ${target.name})`);
    const open = this.#expect('(', `"(" after ${relation.name}.${quantifier}`);
    this.#open(open);
    const inner = this.#or(target, hops);
    this.#expect(')', `")" to close the "(" at ${open.offset}`);
    this.#depth--;
    return { field: relation.name, op: quantifier === 'any' ? 'some' : 'noneOf', value: inner };
  }

  #comparison(resource: ResourceModel, field: FieldModel, name: Token): RuleCondition {
    this.#conditions++;
    if (this.#conditions > this.#limits.maxConditions) {
      throw new FilterSyntaxError(`has more than ${this.#limits.maxConditions} conditions (the one at ${name.offset} is one too many)`, name.offset);
    }
    const token = this.#next();
    const allowed = OPERATORS_BY_TYPE[field.type];
    const takes = (): string => `${field.name} (${field.type}) takes ${allowed.map((op) => SYMBOLS[op]).join(', ')}`;
    const check = (op: QueryOperator): void => {
      if (!allowed.includes(op)) throw new FilterSyntaxError(`operator "${token.text}" at ${token.offset} does not apply to ${field.type} fields; ${takes()}`, token.offset);
    };
    if (this.#isKeyword(token, 'is')) {
      const negated = this.#isKeyword(this.#peek(), 'not');
      if (negated) this.#at++;
      const value = this.#next();
      if (!this.#isKeyword(value, 'null')) throw this.#unexpected(value, `null after "is${negated ? ' not' : ''}"`);
      return { field: field.name, op: 'isNull', value: !negated };
    }
    if (this.#isKeyword(token, 'in')) {
      check('in');
      if (this.#rule && this.#peek().kind === 'reference') {
        const reference = this.#reference(this.#next());
        if (reference.name !== 'auth.scopes' && reference.path[1] !== 'claims') throw new FilterSyntaxError(`"in" at ${token.offset} needs a list: @auth.scopes or an @auth.claims list, not @${reference.name}`, reference.offset);
        return { field: field.name, op: 'in', value: reference };
      }
      const open = this.#expect('(', `"(" and a list of values after "in"`);
      const values: unknown[] = [];
      for (;;) {
        const value = this.#next();
        if (values.length >= this.#limits.maxInValues) throw new FilterSyntaxError(`the list at ${open.offset} has more than ${this.#limits.maxInValues} values; at most ${this.#limits.maxInValues} are allowed`, value.offset);
        values.push(this.#value(field, value, false));
        const after = this.#next();
        if (after.text === ')' && after.kind === 'punctuation') break;
        if (after.text !== ',' || after.kind !== 'punctuation') throw this.#unexpected(after, `"," or ")" in the list started at ${open.offset}`);
      }
      return { field: field.name, op: 'in', value: values };
    }
    const op = token.kind === 'operator' ? COMPARISONS.get(token.text) : undefined;
    if (op === undefined) throw this.#unexpected(token, `an operator after the field "${field.name}" (=, !=, <, <=, >, >=, ~, !~, ^=, in, is null, is not null)`);
    const valueToken = this.#next();
    if (this.#isKeyword(valueToken, 'null')) {
      if (op !== 'eq' && op !== 'ne') throw new FilterSyntaxError(`null at ${valueToken.offset} cannot be compared with "${token.text}"; use "is null" or "is not null"`, valueToken.offset);
      return { field: field.name, op: 'isNull', value: op === 'eq' };
    }
    check(op);
    const value = this.#rule && valueToken.kind === 'reference' ? this.#referenceValue(field, valueToken) : this.#value(field, valueToken, op === 'contains' || op === 'startsWith');
    if (token.text === '~') return { field: field.name, op: 'containsIgnoringCase', value };
    // `!~` is false on a null field, as every comparison but != is.
    if (token.text === '!~') return { field: '', op: 'all', value: [{ field: field.name, op: 'isNull', value: false }, { field: '', op: 'not', value: { field: field.name, op: 'containsIgnoringCase', value } }] };
    return { field: field.name, op, value };
  }

  /** A reference compared with `field`: one whose values can be of the field's type. */
  #referenceValue(field: FieldModel, token: Token): AuthReference {
    const reference = this.#reference(token);
    const fits =
      reference.name === 'now' ? field.type === 'datetime' || field.type === 'date' :
      reference.name === 'auth.scopes' ? false :
      reference.name === 'auth.kind' ? field.type === 'string' || field.type === 'enum' :
      field.type !== 'json' && field.type !== 'file';
    if (!fits) {
      const why = reference.name === 'auth.scopes' ? "is a list; use field in @auth.scopes, or 'scope' in @auth.scopes" : `cannot be compared with ${field.name} (${field.type})`;
      throw new FilterSyntaxError(`@${reference.name} at ${token.offset} ${why}`, token.offset);
    }
    return reference;
  }

  /** A literal as a value of `field`'s type. */
  #value(field: FieldModel, token: Token, text: boolean): unknown {
    const expected = text || field.type === 'string' || field.type === 'enum' || field.type === 'date' || field.type === 'datetime'
      ? `a quoted ${text ? 'text' : field.type === 'string' ? 'string' : field.type}`
      : field.type === 'boolean' ? 'true or false' : field.type === 'json' || field.type === 'file' ? `nothing (${field.type} fields take only is null and is not null)` : 'a number';
    const kindOk =
      token.kind === 'string' ? expected.startsWith('a quoted') :
      token.kind === 'number' ? field.type === 'integer' || field.type === 'number' :
      (this.#isKeyword(token, 'true') || this.#isKeyword(token, 'false')) && field.type === 'boolean';
    if (!kindOk) throw new FilterSyntaxError(`${describe(token)} at ${token.offset} is not a value for ${field.name} (${field.type}); expected ${expected}`, token.offset);
    const parsed = parseFilterValue(field, token.kind === 'name' ? token.text.toLowerCase() : token.text);
    if (parsed.problem !== undefined) throw new FilterSyntaxError(`${describe(token)} at ${token.offset} ${parsed.problem}`, token.offset);
    return parsed.value;
  }

  #unknownName(resource: ResourceModel, name: Token): FilterSyntaxError {
    const fields = canonicalFields(resource).map((f) => f.name);
    const relations = [...resource.relations.keys()];
    const listed = `fields of ${resource.name}: ${fields.join(', ')}${relations.length === 0 ? '' : `; relations: ${relations.join(', ')}`}`;
    return new FilterSyntaxError(`unknown field "${name.text}" at ${name.offset}; ${listed}`, name.offset);
  }

  #open(token: Token): void {
    this.#depth++;
    if (this.#depth > this.#limits.maxDepth) throw new FilterSyntaxError(`nests deeper than ${this.#limits.maxDepth} levels at ${token.offset} (each "(", "not", any( and none( opens one)`, token.offset);
  }

  #expect(text: string, what: string): Token {
    const token = this.#next();
    if (token.text !== text || token.kind !== 'punctuation') throw this.#unexpected(token, what);
    return token;
  }

  #unexpected(token: Token, expected: string): FilterSyntaxError {
    return new FilterSyntaxError(`${describe(token)} at ${token.offset}; expected ${expected}`, token.offset);
  }

  #isKeyword(token: Token, word: string): boolean {
    return token.kind === 'name' && token.text.length === word.length && token.text.toLowerCase() === word;
  }

  #peek(): Token {
    return this.#tokens[this.#at] as Token;
  }

  #next(): Token {
    const token = this.#tokens[this.#at] as Token;
    if (token.kind !== 'end') this.#at++;
    return token;
  }
}

function describe(token: Token): string {
  if (token.kind === 'end') return 'the end of the expression';
  const shown = token.kind === 'string' ? JSON.stringify(token.text.length > 40 ? `${token.text.slice(0, 37)}...` : token.text) : `"${token.text.slice(0, 40)}"`;
  return `${token.kind === 'string' ? 'the string' : token.kind === 'number' ? 'the number' : ''} ${shown}`.trim();
}
