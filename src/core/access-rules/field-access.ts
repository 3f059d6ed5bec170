import { ForbiddenError } from '../../errors.js';
import type { ResourceModel } from '../../schema/schema-model.js';
import type { StoredRecord } from '../../store/list-spec.js';
import { matchesFilter } from '../filter-expression/filter-evaluator.js';
import type { Principal } from '../principal.js';
import { fieldAccessOutcome, rulesOf } from './access-rules.js';
import type { RuleOutcome } from './rule-instances.js';

/**
 * Field access (docs/auth.md#field-access): which fields of which rows a principal may see. A field
 * it may not read is left out of records (REST bodies, events' data; GraphQL answers null with a
 * `forbidden` error at its path), and using it to filter, sort, search or group is refused, so no
 * answer depends on a value the principal cannot see.
 */

/** Per restricted field, what its read access comes to for `principal`; empty when it sees every field. */
export function fieldReadOutcomes(principal: Principal, resource: ResourceModel): ReadonlyMap<string, RuleOutcome> {
  const access = rulesOf(resource).fieldRead;
  if (access.size === 0) return NO_OUTCOMES;
  let outcomes: Map<string, RuleOutcome> | undefined;
  for (const [name, rule] of access) {
    const outcome = fieldAccessOutcome(principal, resource, rule);
    if (outcome !== true) (outcomes ??= new Map()).set(name, outcome);
  }
  return outcomes ?? NO_OUTCOMES;
}

const NO_OUTCOMES: ReadonlyMap<string, RuleOutcome> = new Map();

/**
 * `record` without the fields `principal` may not read on it: the same object when none is hidden,
 * else a copy. The record must hold the fields the rules test (field-projection.ts reads them).
 */
export function withoutHiddenFields(principal: Principal, resource: ResourceModel, record: StoredRecord, outcomes = fieldReadOutcomes(principal, resource)): StoredRecord {
  if (outcomes.size === 0) return record;
  let hidden: Set<string> | undefined;
  for (const [name, outcome] of outcomes) {
    if (!(name in record)) continue;
    if (outcome !== false && matchesFilter(outcome as Exclude<RuleOutcome, boolean>, record, resource)) continue;
    (hidden ??= new Set()).add(name);
  }
  if (hidden === undefined) return record;
  const shown = hidden;
  return Object.fromEntries(Object.entries(record).filter(([name]) => !shown.has(name)));
}

/** The fields `principal` may not read on every row of `resource` (those it may not filter, sort, search or group by). */
export function unreadableFields(principal: Principal, resource: ResourceModel): ReadonlySet<string> {
  const outcomes = fieldReadOutcomes(principal, resource);
  return outcomes.size === 0 ? EMPTY : new Set(outcomes.keys());
}

const EMPTY: ReadonlySet<string> = new Set();

/**
 * @throws ForbiddenError (403) when `fields` names a field `principal` may not read on every row:
 * a filter, sort, search or group on it would tell what it holds.
 */
export function assertFieldsUsable(principal: Principal, resource: ResourceModel, fields: Iterable<string>, use: string): void {
  const hidden = unreadableFields(principal, resource);
  if (hidden.size === 0) return;
  for (const name of fields) {
    if (hidden.has(name)) throw new ForbiddenError(`${resource.name}.${name} is not readable with this credential on every row, so it cannot be used to ${use}.`);
  }
}
