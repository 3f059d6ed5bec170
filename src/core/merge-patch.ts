/**
 * JSON Merge Patch (RFC 7396, section 2): objects merge recursively, `null` removes a member,
 * anything else replaces. Members named `__proto__`, `constructor` or `prototype` are never
 * assigned through the prototype chain: the result is built with own properties only.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result = new Map<string, unknown>(isPlainObject(target) ? Object.entries(target) : []);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) result.delete(key);
    else result.set(key, applyMergePatch(result.get(key), value));
  }
  return Object.fromEntries(result);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
