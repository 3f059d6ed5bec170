import { ForbiddenError } from '../../errors.js';
import { fieldNamed, type FieldModel, type ResourceModel } from '../../schema/schema-model.js';
import type { FilterCondition, StoredRecord } from '../../store/list-spec.js';
import type { AuthReference } from '../filter-expression/auth-references.js';
import { matchesFilter } from '../filter-expression/filter-evaluator.js';
import { isPlainObject } from '../merge-patch.js';
import { isAdmin, type Principal } from '../principal.js';
import type { WriteKind } from '../record-validator.js';
import { ownerValue } from '../access-policy.js';
import { fieldAccessOutcome, presetValue, rulesOf, type FieldAccess } from './access-rules.js';
import { fieldValue, referenceValue } from './rule-instances.js';

/**
 * The write side of access rules (docs/auth.md#presets, #field-access), for every adapter:
 *
 * - A preset (`set: { orgId: "@auth.claims.org" }`) fills its field from the credential on create;
 *   a body naming another value, or a credential without the value, is a 403. Changing the field
 *   later (update, replace) is a 403; a replace that leaves it out keeps it. Admin may set it.
 * - Field write access (`fields.<f>.write`) refuses a create whose body names the field, and an
 *   update or replace that changes its value, unless the principal may write it: by credential
 *   (`public`, `authenticated`, scopes), or by a rule that must hold on the row as stored (create)
 *   and on the row before and after (update, replace). Admin may write every field.
 *
 * Every refusal is a 403 `forbidden` naming the field, with `errors[].pointer` at it.
 */

/** A field write a rule decides on the row: the field and the rule's condition for this principal. */
export interface FieldRuleCheck {
  field: string;
  condition: FilterCondition;
  text: string;
}

/**
 * The body a create or replace validates, preset fields filled in from the credential: on create
 * a body may name only the credential's value; on replace a named value is checked against the
 * stored row instead ({@link enforceFieldChanges}). @throws ForbiddenError
 */
export function withPresets(principal: Principal, resource: ResourceModel, body: unknown, kind: WriteKind): unknown {
  const presets = rulesOf(resource).presets;
  if (presets.size === 0 || !isPlainObject(body) || (kind !== 'create' && kind !== 'replace')) return body;
  const admin = isAdmin(principal);
  let filled: Record<string, unknown> | undefined;
  for (const [name, reference] of presets) {
    const field = fieldNamed(resource, name);
    const sent = body[name];
    if (sent !== undefined && (admin || kind === 'replace')) continue;
    const value = presetValue(principal, resource, field, reference);
    if (value === undefined) {
      if (admin) continue;
      throw noPresetValue(principal, resource, field, reference);
    }
    if (sent !== undefined && !sameValue(field, sent, value)) throw otherPresetValue(resource, field, reference, value);
    (filled ??= { ...body })[name] = value;
  }
  return filled ?? body;
}

/** The preset fields a replace body leaves out: they keep their stored values. */
export function presetsLeftOut(resource: ResourceModel, body: unknown): string[] {
  const presets = rulesOf(resource).presets;
  if (presets.size === 0) return [];
  return [...presets.keys()].filter((name) => !isPlainObject(body) || body[name] === undefined);
}

/**
 * A row a replace creates (a singleton's first PUT) holds the credential's preset values.
 * @throws ForbiddenError
 */
export function enforcePresetsOnCreate(principal: Principal, resource: ResourceModel, record: StoredRecord): void {
  if (isAdmin(principal)) return;
  for (const [name, reference] of rulesOf(resource).presets) {
    const field = fieldNamed(resource, name);
    const value = presetValue(principal, resource, field, reference);
    if (value === undefined) throw noPresetValue(principal, resource, field, reference);
    if (!sameValue(field, record[name], value)) throw otherPresetValue(resource, field, reference, value);
  }
}

/**
 * The field writes of a create body: a field the body names that the principal may not write is
 * refused at once; those a rule decides are returned, to check on the row as stored.
 * @throws ForbiddenError
 */
export function createFieldChecks(principal: Principal, resource: ResourceModel, body: unknown): FieldRuleCheck[] {
  const access = rulesOf(resource).fieldWrite;
  if (access.size === 0 || !isPlainObject(body) || isAdmin(principal)) return [];
  const now = new Date().toISOString();
  const checks: FieldRuleCheck[] = [];
  for (const [name, rule] of access) {
    if (body[name] === undefined) continue;
    const outcome = fieldAccessOutcome(principal, resource, rule, now);
    if (outcome === false) throw fieldWriteRefusal(resource, name, rule);
    if (outcome !== true) checks.push({ field: name, condition: outcome, text: accessText(rule) });
  }
  return checks;
}

/** @throws ForbiddenError when the stored row fails the rule of a field the create wrote */
export function enforceFieldChecks(resource: ResourceModel, checks: readonly FieldRuleCheck[], record: StoredRecord): void {
  for (const check of checks) {
    if (!matchesFilter(check.condition, record, resource)) throw fieldWriteRefusal(resource, check.field, check.text);
  }
}

/**
 * An update or replace changes `changed` on a row: `row` is the row before (checked first, before
 * anything is written) and then the row after. A preset field may not change (except by admin),
 * nor a field the principal may not write on that row. @throws ForbiddenError
 */
export function enforceFieldChanges(principal: Principal, resource: ResourceModel, changed: readonly string[], row: StoredRecord, when: 'before' | 'after'): void {
  const rules = rulesOf(resource);
  if ((rules.presets.size === 0 && rules.fieldWrite.size === 0) || changed.length === 0 || isAdmin(principal)) return;
  const now = new Date().toISOString();
  for (const name of changed) {
    const reference = rules.presets.get(name);
    if (reference !== undefined && when === 'before') throw presetChange(resource, name, reference);
    const access = rules.fieldWrite.get(name);
    if (access === undefined) continue;
    const outcome = fieldAccessOutcome(principal, resource, access, now);
    if (outcome === false || (outcome !== true && !matchesFilter(outcome, row, resource))) throw fieldWriteRefusal(resource, name, access);
  }
}

/** The fields whose stored value `values` would change. */
export function changedFields(current: StoredRecord, values: StoredRecord): string[] {
  return Object.keys(values).filter((name) => JSON.stringify(values[name]) !== JSON.stringify(current[name]));
}

/**
 * Under an owner rule, a principal's writes carry its own subject in the owner field, never
 * another's: the field is filled in when absent (always, for whole representations).
 */
export function withOwner(principal: Principal, resource: ResourceModel, body: unknown, whole: boolean): unknown {
  const owner = resource.owner;
  const value = ownerValue(principal, resource);
  if (owner === undefined || value === undefined || !isPlainObject(body)) return body;
  const sent = body[owner];
  if (sent !== undefined && JSON.stringify(sent) !== JSON.stringify(value) && sent !== String(value)) {
    throw new ForbiddenError(`${owner} must be your own subject (${String(value)}); ${resource.name} cannot be created for or given to someone else.`);
  }
  return whole || sent !== undefined ? { ...body, [owner]: value } : body;
}

/** A body's value is the preset's: the same once converted to the field's type, as the credential's is ("3" is 3). */
function sameValue(field: FieldModel, sent: unknown, value: unknown): boolean {
  if (JSON.stringify(sent) === JSON.stringify(value)) return true;
  const given = fieldValue(field, sent);
  return given !== undefined && JSON.stringify(given) === JSON.stringify(value);
}

function noPresetValue(principal: Principal, resource: ResourceModel, field: FieldModel, reference: AuthReference): ForbiddenError {
  const raw = referenceValue(reference, principal, new Date().toISOString());
  const ref = `@${reference.name}`;
  const why = raw === undefined ? `has no ${ref}` : `has ${ref} ${JSON.stringify(raw)}, which is not a valid ${field.name} (${field.type})`;
  return new ForbiddenError(`This credential ${why}, so it cannot write ${resource.name}: ${field.name} is set from it.`, [], [
    { pointer: `/${field.name}`, detail: `is set from ${ref}, which this credential does not have` },
  ]);
}

function otherPresetValue(resource: ResourceModel, field: FieldModel, reference: AuthReference, value: unknown): ForbiddenError {
  return new ForbiddenError(`${field.name} of ${resource.name} is set from your credential (@${reference.name}): it must be ${JSON.stringify(value)}, or left out.`, [], [
    { pointer: `/${field.name}`, detail: `must be ${JSON.stringify(value)} (@${reference.name}) or left out` },
  ]);
}

function presetChange(resource: ResourceModel, name: string, reference: AuthReference): ForbiddenError {
  return new ForbiddenError(`${name} of ${resource.name} is set from the credential (@${reference.name}) when a row is created; it cannot be changed.`, [], [
    { pointer: `/${name}`, detail: 'cannot be changed' },
  ]);
}

function accessText(access: FieldAccess): string {
  return access.kind === 'access' ? access.text : access.rule.text;
}

function fieldWriteRefusal(resource: ResourceModel, name: string, access: FieldAccess | string): ForbiddenError {
  const text = typeof access === 'string' ? access : accessText(access);
  return new ForbiddenError(`This credential may not write ${resource.name}.${name} here (write: ${text}).`, [], [
    { pointer: `/${name}`, detail: 'may not be written with this credential' },
  ]);
}

/** Whether a create may leave `field` out even when it is required: the owner rule or a preset fills it from the credential. */
export function filledFromCredential(resource: ResourceModel, field: string): boolean {
  return field === resource.owner || Object.hasOwn(resource.presets, field);
}

/** Whether a write the access rule allows may still be refused (403) by the owner rule, a row rule, a preset or field write access. */
export function writesMayBeRefused(resource: ResourceModel): boolean {
  const rules = rulesOf(resource);
  const rows = rules.rows;
  return resource.owner !== undefined || rows.create !== undefined || rows.update !== undefined || rows.delete !== undefined || rules.presets.size > 0 || rules.fieldWrite.size > 0;
}
