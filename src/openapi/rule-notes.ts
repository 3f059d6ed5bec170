import { rulesOf, type FieldAccess } from '../core/access-rules/access-rules.js';
import type { ResourceModel, RuleOperation } from '../schema/schema-model.js';

/**
 * Sentences the OpenAPI document says about a resource's rules (docs/auth.md#rules): the row rule
 * of each operation in its description, presets on create, and each restricted field's read and
 * write access in its schema. Rules are written in the schema's field names.
 */

/** The sentence on the row rule of `operation`, or undefined when the resource has none. */
export function ruleSentence(resource: ResourceModel, operation: RuleOperation): string | undefined {
  const rule = rulesOf(resource).rows[operation];
  if (rule === undefined) return undefined;
  const text = `\`${rule.text}\``;
  const hidden = 'a row the read rule hides is a 404';
  switch (operation) {
    case 'list':
      return `List rule: only rows where ${text} holds are listed, counted and paged (admin: every row).`;
    case 'read':
      return `Read rule: a row where ${text} does not hold is a 404, as if it did not exist (admin: every row).`;
    case 'create':
      return `Create rule: the row as stored must satisfy ${text}, else a 403 \`forbidden\` and nothing is written.`;
    case 'update':
      return `Update rule: the row before and after the change must satisfy ${text}, else a 403 \`forbidden\` and nothing changes; ${hidden}.`;
    case 'delete':
      return `Delete rule: the row must satisfy ${text}, else a 403 \`forbidden\`; ${hidden}.`;
  }
}

/** The sentence on the fields a create fills from the credential, or undefined when none. */
export function presetSentence(resource: ResourceModel): string | undefined {
  const presets = Object.entries(resource.presets);
  if (presets.length === 0) return undefined;
  const list = presets.map(([field, reference]) => `\`${field}\` from \`${reference}\``).join(', ');
  return `Set from the credential on create: ${list}; a body naming another value, or an update changing it, is a 403 (except for admin).`;
}

/**
 * Whether the rules may refuse `use` of the resource with a 403: writes under a create, update or
 * delete rule, a preset or a field's write access; reads that filter, sort or group by a field
 * with read access of its own.
 */
export function rulesMayForbid(resource: ResourceModel, use: 'read' | 'write'): boolean {
  const rules = rulesOf(resource);
  if (use === 'read') return rules.fieldRead.size > 0;
  const { create, update, delete: remove } = rules.rows;
  return create !== undefined || update !== undefined || remove !== undefined || rules.presets.size > 0 || rules.fieldWrite.size > 0 || rules.fieldRead.size > 0;
}

function accessText(access: FieldAccess): string {
  if (access.kind === 'rule') return `on the rows where \`${access.rule.text}\` holds`;
  const rule = access.rule;
  if (rule.kind === 'public') return 'by anyone';
  if (rule.kind === 'authenticated') return 'with any token';
  return `with one of the scopes ${rule.anyOf.join(', ')}`;
}

/** What a field's schema says of its read and write access, or undefined when it has none of its own. */
export function fieldAccessNote(resource: ResourceModel, field: string): string | undefined {
  const { fieldRead, fieldWrite } = rulesOf(resource);
  const read = fieldRead.get(field);
  const write = fieldWrite.get(field);
  const notes: string[] = [];
  if (read !== undefined) notes.push(`Readable ${accessText(read)} (admin: always); elsewhere left out of answers, and filtering, sorting or grouping by it is a 403.`);
  if (write !== undefined) notes.push(`Writable ${accessText(write)} (admin: always); elsewhere writing it is a 403.`);
  return notes.length === 0 ? undefined : notes.join(' ');
}
