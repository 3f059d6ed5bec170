import { fieldNamed, type ResourceModel } from '../schema/schema-model.js';
import type { FilterCondition, ListSpec } from './list-spec.js';
import type { SqlDialectRules } from './sql-dialect-rules.js';

/**
 * A filter value left out of a statement compiled once for many requests: the statement holds
 * the slot among its parameters, and each request binds its own value there ({@link bindTemplate}).
 */
export class ValueSlot {
  constructor(readonly index: number) {}

  toJSON(): string {
    return `?${String(this.index)}`;
  }
}

/**
 * A list spec split into its shape and its values: `spec` is the spec with each bindable filter
 * value replaced by a {@link ValueSlot}, `values` what goes into the slots (already encoded as the
 * database stores them), and `key` names the shape. Two requests that differ only in their values
 * (`customerId = 42 or total = 10` and `customerId = 7 or total = 3`) have the same key, so the
 * statement compiled for one serves the other.
 */
export interface ListTemplate {
  key: string;
  spec: ListSpec;
  values: unknown[];
}

/**
 * The template of a list spec, or undefined when a value shapes the statement's text itself and
 * the spec is compiled as it is: keyset bounds, a relevance order, and the text tests (`contains`,
 * `startsWith`, `containsIgnoringCase`, `textMatch`, `search`), whose values the dialects turn
 * into patterns, lengths or folded text. A null (`= null`), the boolean of `isNull` and the length
 * of an `in` list are part of the shape, as they change the text.
 */
export function listTemplate(resource: ResourceModel, spec: ListSpec, rules: SqlDialectRules, resources: (name: string) => ResourceModel): ListTemplate | undefined {
  if (spec.after !== undefined || spec.before !== undefined || spec.relevance !== undefined || spec.filters.length === 0) return undefined;
  const values: unknown[] = [];
  const slot = (value: unknown): ValueSlot => new ValueSlot(values.push(value) - 1);

  const shape = (filter: FilterCondition, owner: ResourceModel): FilterCondition | undefined => {
    switch (filter.op) {
      case 'none':
      case 'isNull':
        return filter;
      case 'any':
      case 'all': {
        const parts: FilterCondition[] = [];
        for (const part of filter.value as readonly FilterCondition[]) {
          const shaped = shape(part, owner);
          if (shaped === undefined) return undefined;
          parts.push(shaped);
        }
        return { ...filter, value: parts };
      }
      case 'not': {
        const inner = shape(filter.value as FilterCondition, owner);
        return inner === undefined ? undefined : { ...filter, value: inner };
      }
      case 'related':
      case 'some':
      case 'noneOf': {
        const relation = owner.relations.get(filter.field);
        if (relation === undefined) return undefined;
        const inner = shape(filter.value as FilterCondition, resources(relation.target));
        return inner === undefined ? undefined : { ...filter, value: inner };
      }
      case 'eq':
      case 'ne':
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte': {
        if (filter.value === null) return filter;
        const encoded = rules.encode(fieldNamed(owner, filter.field), filter.value);
        // A value the database stores as null would change the text (`is null`): compiled as it is.
        return encoded === null || encoded === undefined ? undefined : { ...filter, value: slot(encoded) };
      }
      case 'in': {
        const field = fieldNamed(owner, filter.field);
        const encoded = (filter.value as readonly unknown[]).map((v) => rules.encode(field, v));
        if (encoded.some((v) => v === null || v === undefined)) return undefined;
        return { ...filter, value: encoded.map(slot) };
      }
      default:
        return undefined;
    }
  };

  const filters: FilterCondition[] = [];
  for (const filter of spec.filters) {
    const shaped = shape(filter, resource);
    if (shaped === undefined) return undefined;
    filters.push(shaped);
  }
  const key = `${resource.name}|${JSON.stringify([filters, spec.sort, spec.limit, spec.offset ?? 0, spec.columns ?? 0])}`;
  return { key, spec: { ...spec, filters }, values };
}

/** The parameters of a template's compiled statement for one request: each slot's value bound in its place. */
export function bindTemplate(parameters: readonly unknown[], values: readonly unknown[]): unknown[] {
  return parameters.map((p) => (p instanceof ValueSlot ? values[p.index] : p));
}
