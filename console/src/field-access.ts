import type { AccessSummary } from './context.js';
import type { FieldInfo, ResourceInfo, SchemaInfo } from './schema.js';

/**
 * The schema as this token may use it, from `GET /v1/auth/me`'s field access: a field it may read
 * on no row is left out (no column, no input, no filter); a field it may not write is shown but
 * not edited; a field it may read only where a rule admits is marked with the rule (and offered
 * for no filter, sort or count, which the server would refuse).
 */
export function schemaForToken(schema: SchemaInfo, me: AccessSummary): SchemaInfo {
  const resources = new Map<string, ResourceInfo>();
  for (const [name, resource] of schema.resources) {
    const access = me.resources[name]?.fields;
    if (access === undefined) {
      resources.set(name, resource);
      continue;
    }
    const fields: FieldInfo[] = [];
    for (const field of resource.fields) {
      const rules = access[field.name];
      if (rules === undefined) fields.push(field);
      else if (rules.read.allowed !== false) {
        fields.push({
          ...field,
          readOnly: field.readOnly || rules.write.allowed === false,
          ...(rules.read.allowed === 'rule' ? { readRule: rules.read.rule } : {}),
        });
      }
    }
    resources.set(name, { ...resource, fields });
  }
  return { ...schema, resources };
}

/** Whether the token may filter, sort or group by `field` (it reads it on every row). */
export function usableInQueries(field: FieldInfo): boolean {
  return field.readRule === undefined;
}
