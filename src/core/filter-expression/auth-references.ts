import type { FilterCondition, FilterOperator } from '../../store/list-spec.js';

/**
 * What access rules may name besides the record's fields (docs/auth.md#rules): the credential's
 * values and the time. A rule is parsed once, at start, into a {@link RuleCondition} that holds
 * {@link AuthReference}s; each request fills them in from its principal (core/access-rules).
 */

/** `@auth.sub`, `@auth.kind`, `@auth.scopes`, `@auth.claims.<name>[.<name>…]`, `@now`. */
export class AuthReference {
  /** The path after "@": `['auth', 'sub']`, `['auth', 'claims', 'org']`, `['now']`. */
  readonly path: readonly string[];
  /** Where it is written in the rule (character offset). */
  readonly offset: number;

  constructor(path: readonly string[], offset: number) {
    this.path = path;
    this.offset = offset;
  }

  /** As written, without the "@". */
  get name(): string {
    return this.path.join('.');
  }
}

/**
 * A test of the credential alone (no field): `'posts:moderate' in @auth.scopes`, `@auth.kind =
 * 'jwt'`, `@auth.claims.plan != 'free'`. Each request answers it with true or false.
 */
export interface AuthTest {
  reference: AuthReference;
  /** `has`: the literal is one of the reference's values (scopes, an array claim). */
  op: 'eq' | 'ne' | 'has';
  literal: string | number | boolean;
}

/**
 * A condition as a rule is written: a {@link FilterCondition} whose values may be
 * {@link AuthReference}s, and whose leaves may be {@link AuthTest}s (`op: 'authTest'`).
 */
export interface RuleCondition {
  field: string;
  op: FilterOperator | 'authTest';
  value: unknown;
}

/** The references a rule may use, and what each names. */
export const REFERENCE_HELP = '@auth.sub, @auth.kind, @auth.scopes, @auth.claims.<name> or @now';

/** Why `path` is not a reference rules may use, or undefined when it is one. */
export function referenceProblem(path: readonly string[]): string | undefined {
  const [root, member, claim] = path;
  if (root === 'now' && path.length === 1) return undefined;
  if (root === 'auth' && path.length === 2 && (member === 'sub' || member === 'kind' || member === 'scopes')) return undefined;
  if (root === 'auth' && member === 'claims' && claim !== undefined) return undefined;
  return `is not a value rules know; expected ${REFERENCE_HELP}`;
}

/** Whether `condition` holds a reference or a credential test anywhere (it is not a plain filter). */
export function isPlainFilter(condition: RuleCondition): condition is FilterCondition {
  if (condition.op === 'authTest' || condition.value instanceof AuthReference) return false;
  if (condition.op === 'any' || condition.op === 'all') return (condition.value as readonly RuleCondition[]).every(isPlainFilter);
  if (condition.op === 'not' || condition.op === 'related' || condition.op === 'some' || condition.op === 'noneOf') return isPlainFilter(condition.value as RuleCondition);
  return true;
}
