import { resourceNamed, type ResourceModel, type SchemaModel } from '../schema/schema-model.js';
import type { FilterCondition } from '../store/list-spec.js';
import { authorize, ownerReadFilter } from './access-policy.js';
import type { Principal } from './principal.js';

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
      const owner = ownerReadFilter(principal, target);
      return { ...filter, value: owner === undefined ? inner : { field: '', op: 'all', value: [inner, owner] } };
    }
    default:
      return filter;
  }
}

/**
 * What a principal's read of `resource` runs under, all of it compiled into the one statement: its
 * filters as {@link filtersForReader} scopes them, and the resource's owner rule. `restricted`: the
 * owner rule hides rows of the table from this principal.
 * @throws AuthenticationRequiredError, ForbiddenError
 */
export function readerFilters(principal: Principal, schema: SchemaModel, resource: ResourceModel, filters: readonly FilterCondition[]): { filters: FilterCondition[]; restricted: boolean } {
  const owner = ownerReadFilter(principal, resource);
  const own = filtersForReader(principal, schema, resource, filters);
  return { filters: owner === undefined ? [...own] : [...own, owner], restricted: owner !== undefined };
}
