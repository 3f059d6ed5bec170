import { RULE_OPERATIONS, type ResourceModel, type RuleOperation } from '../../schema/schema-model.js';
import type { Principal } from '../principal.js';
import { fieldAccessOutcome, ruleOutcome, rulesOf, type FieldAccess } from './access-rules.js';
import type { RuleOutcome } from './rule-instances.js';

/**
 * What a resource's rules (docs/auth.md#rules) come to for one principal, as `GET /v1/auth/me`
 * tells it: per operation and per restricted field, allowed on every row, on none, or on the rows
 * a rule lets through (with the rule's text, as written in the schema).
 */

/** `true`: every row (that the owner rule leaves); `false`: none; `'rule'`: the rows `rule` admits. */
export type RuleAllowance = { allowed: true } | { allowed: false } | { allowed: 'rule'; rule: string };

/** Reading and writing one restricted field. */
export interface FieldAllowance {
  read: RuleAllowance;
  write: RuleAllowance;
}

const ALLOWED: RuleAllowance = Object.freeze({ allowed: true });
const REFUSED: RuleAllowance = Object.freeze({ allowed: false });

function allowance(outcome: RuleOutcome, text: string | undefined): RuleAllowance {
  if (outcome === true) return ALLOWED;
  if (outcome === false || text === undefined) return REFUSED;
  return { allowed: 'rule', rule: text };
}

/**
 * Per row operation (`list`, `read`, `create`, `update`, `delete`): what its rule allows this
 * principal, given whether `access` lets it attempt the operation at all (`gate`); undefined when
 * the resource has no row rule.
 */
export function rowRuleAllowances(principal: Principal, resource: ResourceModel, gate: (operation: RuleOperation) => boolean): Record<RuleOperation, RuleAllowance> | undefined {
  const rows = rulesOf(resource).rows;
  if (Object.keys(rows).length === 0) return undefined;
  const now = new Date().toISOString();
  const found = {} as Record<RuleOperation, RuleAllowance>;
  for (const operation of RULE_OPERATIONS) {
    found[operation] = gate(operation) ? allowance(ruleOutcome(principal, resource, operation, now), rows[operation]?.text) : REFUSED;
  }
  return found;
}

function fieldAllowance(principal: Principal, resource: ResourceModel, access: FieldAccess | undefined, now: string): RuleAllowance {
  if (access === undefined) return ALLOWED;
  return allowance(fieldAccessOutcome(principal, resource, access, now), access.kind === 'rule' ? access.rule.text : undefined);
}

/** Per field with a `read` or `write` access of its own: what each allows this principal; undefined when none has. */
export function fieldAllowances(principal: Principal, resource: ResourceModel): Record<string, FieldAllowance> | undefined {
  const { fieldRead, fieldWrite } = rulesOf(resource);
  if (fieldRead.size === 0 && fieldWrite.size === 0) return undefined;
  const now = new Date().toISOString();
  const found: Record<string, FieldAllowance> = {};
  for (const field of resource.fields.values()) {
    if (!fieldRead.has(field.name) && !fieldWrite.has(field.name)) continue;
    found[field.name] = { read: fieldAllowance(principal, resource, fieldRead.get(field.name), now), write: fieldAllowance(principal, resource, fieldWrite.get(field.name), now) };
  }
  return found;
}
