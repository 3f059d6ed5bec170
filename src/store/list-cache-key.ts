import type { ResourceModel } from '../schema/schema-model.js';
import type { ListSpec } from './list-spec.js';

/**
 * The cache key of a list spec: the resource and every part of the spec, values included. A spec
 * holding anything JSON would not tell apart (undefined, non-finite numbers, bigints, class
 * instances such as dates) gets no key and is not cached.
 */
export function listCacheKey(resource: ResourceModel, spec: ListSpec): string | undefined {
  if (spec.filters.length === 0 && spec.after === undefined && spec.before === undefined && spec.columns === undefined) {
    // The most frequent shape (a plain page) without serialising the spec.
    let sort = '';
    for (const key of spec.sort) sort += `${key.field} ${key.direction},`;
    return `${resource.name}|${sort}|${spec.limit}|${spec.offset ?? 0}`;
  }
  const parts = [spec.filters, spec.sort, spec.limit, spec.offset ?? 0, spec.after ?? 0, spec.before ?? 0, spec.columns ?? 0, spec.relevance ?? 0, spec.restricted === true];
  return isPlainJson(parts) ? `${resource.name}|${JSON.stringify(parts)}` : undefined;
}

/**
 * The cache key of a listByKeys read's shape: the resource, the key field, how many keys, and
 * every option, values included; the keys themselves are not part of it. Undefined (not cached)
 * when an option holds anything JSON would not tell apart.
 */
export function byKeysCacheKey(resource: ResourceModel, field: string, keyCount: number, options: object): string | undefined {
  return isPlainJson(options) ? `${resource.name}|${field}|${keyCount}|${JSON.stringify(options)}` : undefined;
}

/** Whether JSON text says all there is to know about a value: JSON's own types, plain objects, finite numbers. */
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value).every(isPlainJson);
  return false;
}
