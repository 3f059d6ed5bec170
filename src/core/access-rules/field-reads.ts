import { ForbiddenError } from '../../errors.js';
import { resourceNamed, searchableFields, type FieldModel, type ResourceModel, type SchemaModel } from '../../schema/schema-model.js';
import type { GroupKey, Measure } from '../../store/aggregate-spec.js';
import type { FilterCondition, SortKey, StoredRecord } from '../../store/list-spec.js';
import type { RuleCondition } from '../filter-expression/auth-references.js';
import type { Principal } from '../principal.js';
import { rulesOf } from './access-rules.js';
import { assertFieldsUsable, fieldReadOutcomes, unreadableFields, withoutHiddenFields } from './field-access.js';

/**
 * Field access applied to the core's reads (docs/auth.md#field-access), so every adapter answers
 * the same: records lose the fields the principal may not read on them, and a filter, sort,
 * search, group or relation that would test a field it may not read on every row is a 403.
 */

const restrictedSchemas = new WeakMap<SchemaModel, boolean>();

/** Whether some field of `schema` has read access of its own (when none does, reads skip every check here). */
export function hasFieldReadRules(schema: SchemaModel): boolean {
  let found = restrictedSchemas.get(schema);
  if (found === undefined) {
    found = [...schema.resources.values()].some((r) => rulesOf(r).fieldRead.size > 0);
    restrictedSchemas.set(schema, found);
  }
  return found;
}

/** Whether a field has read access that may hide it from someone (any but `public`): answers may leave it out. */
export function readRestricted(field: FieldModel): boolean {
  return field.read !== undefined && field.read !== 'public';
}

/** `records`, each without the fields `principal` may not read on it (the same array when no field is restricted). */
export function shownRecords(principal: Principal, resource: ResourceModel, records: StoredRecord[]): StoredRecord[] {
  const outcomes = fieldReadOutcomes(principal, resource);
  if (outcomes.size === 0) return records;
  return records.map((record) => withoutHiddenFields(principal, resource, record, outcomes));
}

/** The fields the read rules of `fields` test: what a projection to `fields` must read as well, to decide them. */
export function fieldsRulesTest(resource: ResourceModel, fields: Iterable<string>): string[] {
  const access = rulesOf(resource).fieldRead;
  if (access.size === 0) return [];
  const tested = new Set<string>();
  const visit = (condition: RuleCondition): void => {
    switch (condition.op) {
      case 'any':
      case 'all':
        for (const part of condition.value as readonly RuleCondition[]) visit(part);
        return;
      case 'not':
        visit(condition.value as RuleCondition);
        return;
      case 'authTest':
      case 'none':
        return;
      default:
        tested.add(condition.field);
    }
  };
  for (const name of fields) {
    const rule = access.get(name);
    if (rule?.kind === 'rule') visit(rule.rule.template);
  }
  return [...tested];
}

/**
 * @throws ForbiddenError when a condition of `filters` (through `any`/`all`/`not`, into the targets
 * of relation paths, a search over the searchable fields) tests a field `principal` may not read
 * on every row of its resource.
 */
export function assertFiltersUsable(principal: Principal, schema: SchemaModel, resource: ResourceModel, filters: readonly FilterCondition[]): void {
  if (!hasFieldReadRules(schema)) return;
  const hidden = new Map<ResourceModel, ReadonlySet<string>>();
  const hiddenIn = (r: ResourceModel): ReadonlySet<string> => {
    let found = hidden.get(r);
    if (found === undefined) hidden.set(r, (found = unreadableFields(principal, r)));
    return found;
  };
  const refuse = (r: ResourceModel, field: string, use: string): never => {
    throw new ForbiddenError(`${r.name}.${field} is not readable with this credential on every row, so it cannot be used to ${use}.`);
  };
  const visit = (r: ResourceModel, condition: FilterCondition): void => {
    switch (condition.op) {
      case 'any':
      case 'all':
        for (const part of condition.value as readonly FilterCondition[]) visit(r, part);
        return;
      case 'not':
        visit(r, condition.value as FilterCondition);
        return;
      case 'none':
        return;
      case 'search':
        for (const field of searchableFields(r)) if (hiddenIn(r).has(field.name)) refuse(r, field.name, 'search (it is searchable)');
        return;
      case 'related':
      case 'some':
      case 'noneOf': {
        const relation = r.relations.get(condition.field);
        if (relation === undefined) return;
        const target = resourceNamed(schema, relation.target);
        // Following the relation compares its foreign key, on whichever side it is.
        if (relation.kind === 'belongsTo' && hiddenIn(r).has(relation.foreignKey)) refuse(r, relation.foreignKey, `follow ${relation.name}`);
        if (relation.kind === 'hasMany' && hiddenIn(target).has(relation.foreignKey)) refuse(target, relation.foreignKey, `follow ${r.name}.${relation.name}`);
        visit(target, condition.value as FilterCondition);
        return;
      }
      default:
        if (hiddenIn(r).has(condition.field)) refuse(r, condition.field, 'filter');
    }
  };
  for (const filter of filters) visit(resource, filter);
}

/** @throws ForbiddenError when `sort` orders by a field `principal` may not read on every row */
export function assertSortUsable(principal: Principal, resource: ResourceModel, sort: readonly SortKey[]): void {
  if (rulesOf(resource).fieldRead.size === 0) return;
  assertFieldsUsable(principal, resource, sort.map((k) => k.field), 'sort');
}

/**
 * @throws ForbiddenError when reading a hasMany relation (its rows per parent, their count or
 * aggregate) would group the target's rows by a foreign key `principal` may not read on every row
 */
export function assertForeignKeyUsable(principal: Principal, target: ResourceModel, foreignKey: string): void {
  if (rulesOf(target).fieldRead.size === 0) return;
  assertFieldsUsable(principal, target, [foreignKey], 'read it as a relation');
}

/** The error of a field a principal may not read on the row in hand (GraphQL: null with this error at its path). */
export function hiddenFieldError(resource: ResourceModel, field: string): ForbiddenError {
  return new ForbiddenError(`${resource.name}.${field} is not readable with this credential on this ${resource.singular}.`);
}

/** @throws ForbiddenError when an aggregate groups by, or computes over, a field `principal` may not read on every row */
export function assertAggregateUsable(principal: Principal, resource: ResourceModel, query: { groupBy: readonly GroupKey[]; measures: readonly Measure[] }): void {
  if (rulesOf(resource).fieldRead.size === 0) return;
  assertFieldsUsable(principal, resource, [...query.groupBy.map((k) => k.field), ...query.measures.map((m) => m.field)], 'group or aggregate');
}
