import { resourceNamed, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import type { FilterCondition, StoredRecord } from '../store/list-spec.js';
import { authorize, ownerReadFilter, rowPasses } from './access-policy.js';
import { passesRule, ruleFilter, ruleOutcome } from './access-rules/access-rules.js';
import { matchesFilter } from './filter-expression/filter-evaluator.js';
import type { Principal } from './principal.js';
import { assertFiltersUsable } from './access-rules/field-reads.js';

/**
 * Filters as `principal` may apply them to `resource`: a relation path (`related`, `some`,
 * `noneOf`) reads its target, so the target's read rule applies (the same 401/403 as reading it),
 * and under the target's owner rule only the related rows the principal can see count. The same
 * array comes back when nothing changes (the usual case: no relation path).
 * @throws AuthenticationRequiredError, ForbiddenError
 */
export function filtersForReader(principal: Principal, schema: SchemaModel, resource: ResourceModel, filters: readonly FilterCondition[]): readonly FilterCondition[] {
  let changed: FilterCondition[] | undefined;
  for (const [i, filter] of filters.entries()) {
    const scoped = scopedCondition(principal, schema, resource, filter);
    if (scoped !== filter) (changed ??= [...filters])[i] = scoped;
  }
  return changed ?? filters;
}

function scopedCondition(principal: Principal, schema: SchemaModel, resource: ResourceModel, filter: FilterCondition): FilterCondition {
  switch (filter.op) {
    case 'any':
    case 'all': {
      const parts = filter.value as readonly FilterCondition[];
      const scoped = filtersForReader(principal, schema, resource, parts);
      return scoped === parts ? filter : { ...filter, value: scoped };
    }
    case 'not': {
      const inner = filter.value as FilterCondition;
      const scoped = scopedCondition(principal, schema, resource, inner);
      return scoped === inner ? filter : { ...filter, value: scoped };
    }
    case 'related':
    case 'some':
    case 'noneOf': {
      const relation = resource.relations.get(filter.field);
      if (relation === undefined) throw new Error(`unknown relation ${resource.name}.${filter.field}`);
      const target = resourceNamed(schema, relation.target);
      authorize(principal, target, 'read');
      const inner = scopedCondition(principal, schema, target, filter.value as FilterCondition);
      const visible = visibleRowFilters(principal, target, 'list');
      return { ...filter, value: visible.length === 0 ? inner : { field: '', op: 'all', value: [inner, ...visible] } };
    }
    default:
      return filter;
  }
}

/**
 * The conditions that keep rows of `resource` out of `principal`'s sight: the owner rule and the
 * row rule of `operation` (`list` for lists, `read` for one row). Empty when every row is visible.
 */
export function visibleRowFilters(principal: Principal, resource: ResourceModel, operation: 'list' | 'read'): FilterCondition[] {
  const owner = ownerReadFilter(principal, resource);
  const rule = ruleFilter(principal, resource, operation);
  return owner === undefined ? (rule === undefined ? [] : [rule]) : rule === undefined ? [owner] : [owner, rule];
}

/** Whether `principal` may see `record` as one row (GET by id, a write's target, an event): owner and read rules. */
export function rowVisible(principal: Principal, resource: ResourceModel, record: StoredRecord): boolean {
  return rowPasses(record, ownerReadFilter(principal, resource)) && passesRule(principal, resource, 'read', record);
}

/**
 * {@link rowVisible} for several rows of one principal (an event's versions), the rules filled in
 * once: undefined when every row is visible to it, else the test of a row.
 */
export function rowVisibility(principal: Principal, resource: ResourceModel): ((record: StoredRecord) => boolean) | undefined {
  const owner = ownerReadFilter(principal, resource);
  const rule = ruleOutcome(principal, resource, 'read');
  if (rule === true) return owner === undefined ? undefined : (record) => rowPasses(record, owner);
  if (rule === false) return () => false;
  return (record) => rowPasses(record, owner) && matchesFilter(rule, record, resource);
}

/**
 * What a principal's read of `resource` runs under, all of it compiled into the one statement: its
 * filters as {@link filtersForReader} scopes them, the owner rule and the list rule. `restricted`:
 * the rules hide rows of the table from this principal. A filter testing a field the principal may
 * not read on every row is refused.
 * @throws AuthenticationRequiredError, ForbiddenError
 */
export function readerFilters(principal: Principal, schema: SchemaModel, resource: ResourceModel, filters: readonly FilterCondition[]): { filters: FilterCondition[]; restricted: boolean } {
  assertFiltersUsable(principal, schema, resource, filters);
  const visible = visibleRowFilters(principal, resource, 'list');
  const own = filtersForReader(principal, schema, resource, filters);
  return { filters: visible.length === 0 ? [...own] : [...own, ...visible], restricted: visible.length > 0 };
}
