import type { FieldModel, ResourceModel } from '../../schema/schema-model.js';
import type { FilterCondition } from '../../store/list-spec.js';
import { AuthReference, type AuthTest, type RuleCondition } from '../filter-expression/auth-references.js';
import { parseFilterValue } from '../filter-values.js';
import { hasNul } from '../storable-text.js';
import { isAdmin, type Principal } from '../principal.js';

/**
 * A rule as each request applies it: its references filled in from the principal, into a plain
 * {@link FilterCondition} the store compiles into SQL and the evaluator applies to events' rows.
 *
 * Semantics (docs/auth.md#rules): a comparison with an absent value (no subject, a missing claim, a
 * value that does not convert to the field's type) is never true, and neither is its negation,
 * as SQL's unknown: the template is in negation normal form ({@link toNegationNormalForm}), so
 * each such comparison simply becomes false where it stands. Credential tests become constants,
 * and constants fold away: a rule that holds for every row is `true` (no filter at all).
 */

/** A rule with every `not` pushed down to the comparisons (De Morgan), built once at start. */
export function toNegationNormalForm(rule: RuleCondition, negate = false): RuleCondition {
  switch (rule.op) {
    case 'not':
      return toNegationNormalForm(rule.value as RuleCondition, !negate);
    case 'any':
    case 'all': {
      const parts = (rule.value as readonly RuleCondition[]).map((part) => toNegationNormalForm(part, negate));
      const op = negate ? (rule.op === 'any' ? 'all' : 'any') : rule.op;
      return { field: '', op, value: parts };
    }
    default:
      return negate ? { field: '', op: 'not', value: rule } : rule;
  }
}

/** What a rule comes to for one principal: every row, no row, or the rows a condition matches. */
export type RuleOutcome = true | false | FilterCondition;

/** The credential's value a reference names, or undefined when it has none. */
export function referenceValue(reference: AuthReference, principal: Principal, now: string): unknown {
  const [root, member, ...claim] = reference.path;
  if (root === 'now') return now;
  switch (member) {
    case 'sub':
      return principal.subject;
    case 'kind':
      return principal.kind === 'anonymous' ? 'anonymous' : principal.kind === 'jwt' ? 'jwt' : 'key';
    case 'scopes':
      return [...principal.scopes];
    default: {
      let value: unknown = principal.claims;
      for (const name of claim) {
        if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined;
        value = (value as Record<string, unknown>)[name];
      }
      return value ?? undefined;
    }
  }
}

/**
 * `rule` (in negation normal form) for `principal` at `now`: true when it admits every row, false
 * when none, else the condition to compile. Admin passes every rule.
 */
export function instantiateRule(rule: RuleCondition, resource: ResourceModel, principal: Principal, now: string): RuleOutcome {
  if (isAdmin(principal)) return true;
  return instantiate(rule, resource, principal, now);
}

function instantiate(rule: RuleCondition, resource: ResourceModel, principal: Principal, now: string): RuleOutcome {
  switch (rule.op) {
    case 'any':
    case 'all': {
      const all = rule.op === 'all';
      const kept: FilterCondition[] = [];
      for (const part of rule.value as readonly RuleCondition[]) {
        const outcome = instantiate(part, resource, principal, now);
        if (outcome === !all) return !all;
        if (outcome !== all) kept.push(outcome as FilterCondition);
      }
      if (kept.length === 0) return all;
      return kept.length === 1 ? (kept[0] as FilterCondition) : { field: '', op: rule.op, value: kept };
    }
    case 'not': {
      // Only above a comparison or a credential test (negation normal form).
      const inner = leaf(rule.value as RuleCondition, resource, principal, now);
      if (inner === undefined) return false;
      return typeof inner === 'boolean' ? !inner : { field: '', op: 'not', value: inner };
    }
    default:
      return leaf(rule, resource, principal, now) ?? false;
  }
}

/** A comparison or credential test for this principal; undefined when it compares with an absent value. */
function leaf(rule: RuleCondition, resource: ResourceModel, principal: Principal, now: string): RuleOutcome | undefined {
  if (rule.op === 'authTest') return credentialTest(rule.value as AuthTest, principal, now);
  if (!(rule.value instanceof AuthReference)) return rule as FilterCondition;
  const field = resource.fields.get(rule.field);
  const given = referenceValue(rule.value, principal, now);
  if (field === undefined || given === undefined) return undefined;
  if (rule.op === 'in') {
    const values = (Array.isArray(given) ? given : [given]).map((v) => fieldValue(field, v)).filter((v) => v !== undefined);
    return values.length === 0 ? undefined : { field: field.name, op: 'in', value: values };
  }
  const value = rule.op === 'containsIgnoringCase' || rule.op === 'contains' || rule.op === 'startsWith' ? textValue(given) : fieldValue(field, given, rule.value.name === 'now');
  return value === undefined ? undefined : { field: field.name, op: rule.op, value };
}

function credentialTest(test: AuthTest, principal: Principal, now: string): boolean | undefined {
  const value = referenceValue(test.reference, principal, now);
  if (value === undefined) return undefined;
  if (test.op === 'has') return Array.isArray(value) ? value.some((v) => sameLiteral(v, test.literal)) : sameLiteral(value, test.literal);
  if (typeof value === 'object') return undefined;
  return sameLiteral(value, test.literal) === (test.op === 'eq');
}

/** A claim's value equals a rule's literal: same type, or a number and its decimal text. */
function sameLiteral(value: unknown, literal: string | number | boolean): boolean {
  if (typeof value === typeof literal) return value === literal;
  if (typeof value === 'number' && typeof literal === 'string') return String(value) === literal;
  if (typeof value === 'string' && typeof literal === 'number') return value === String(literal);
  return false;
}

function textValue(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && !hasNul(value) ? value : undefined;
}

/**
 * A credential's value as a value of `field`'s type, or undefined when it does not convert (it
 * then matches nothing): the subject "3" is the integer 3; `@now` on a date field is today (UTC).
 */
export function fieldValue(field: FieldModel, value: unknown, now = false): unknown {
  if (now && field.type === 'date' && typeof value === 'string') return value.slice(0, 10);
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (typeof value === 'boolean') text = String(value);
  else return undefined;
  if (typeof value === 'boolean' && field.type !== 'boolean') return undefined;
  const parsed = parseFilterValue(field, text);
  return parsed.problem === undefined ? parsed.value : undefined;
}
