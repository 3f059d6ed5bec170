import { ForbiddenError, SchemaError, type SchemaProblem } from '../../errors.js';
import { RULE_OPERATIONS, type AccessRule, type FieldAccessDefinition, type FieldModel, type ResourceModel, type RuleOperation, type SchemaModel } from '../../schema/schema-model.js';
import type { FilterCondition, StoredRecord } from '../../store/list-spec.js';
import { AuthReference, referenceProblem, type RuleCondition } from '../filter-expression/auth-references.js';
import { readRuleExpression } from '../filter-expression/filter-parser.js';
import { matchesFilter } from '../filter-expression/filter-evaluator.js';
import { isAdmin, type Principal } from '../principal.js';
import { fieldValue, instantiateRule, referenceValue, toNegationNormalForm, type RuleOutcome } from './rule-instances.js';
import type { RecordId } from '../../schema/record-key.js';

/**
 * The schema's access rules beyond `access` (docs/auth.md): row rules per operation, field access
 * and presets, compiled once per resource (at start: {@link checkAccessRules}) and applied for
 * each principal by the core, for every adapter. Reads compile a rule into their SQL (list
 * filters); single rows, writes and events apply the same condition to the row in memory with the
 * evaluator the property test holds to the SQL's answers.
 */

/** A compiled rule: its text (for messages) and its template, in negation normal form. */
export interface CompiledRule {
  operation: RuleOperation | 'field';
  text: string;
  template: RuleCondition;
  /** Whether it names `@now` (else the clock is not read for it). */
  usesNow: boolean;
}

/** Who may see or set a field: an access rule (by credential alone), or a rule on the record. */
export type FieldAccess = { kind: 'access'; rule: AccessRule; text: string } | { kind: 'rule'; rule: CompiledRule };

export interface ResourceRules {
  /** `read` is `list` when not written. */
  rows: Partial<Record<RuleOperation, CompiledRule>>;
  fieldRead: ReadonlyMap<string, FieldAccess>;
  fieldWrite: ReadonlyMap<string, FieldAccess>;
  /** Field → the reference it is filled from on create. */
  presets: ReadonlyMap<string, AuthReference>;
}

const compiled = new WeakMap<ResourceModel, ResourceRules>();
const NO_RULES: ResourceRules = Object.freeze({ rows: {}, fieldRead: new Map(), fieldWrite: new Map(), presets: new Map() });

/**
 * Compiles every resource's rules, so a server never starts with one it cannot apply.
 * @throws SchemaError naming the resource, the rule and the character position of each problem
 */
export function checkAccessRules(schema: SchemaModel): void {
  const problems: SchemaProblem[] = [];
  for (const resource of schema.resources.values()) compileResource(resource, problems);
  if (problems.length === 0) return;
  const source = schema.source;
  throw new SchemaError(source?.file ?? 'schema', problems.map((p) => ({ ...p, ...source?.position(p.path) })));
}

/** The compiled rules of `resource` (compiled on first use; problems were refused at start). */
export function rulesOf(resource: ResourceModel): ResourceRules {
  let rules = compiled.get(resource);
  if (rules === undefined) {
    const problems: SchemaProblem[] = [];
    rules = compileResource(resource, problems);
    if (problems.length > 0) throw new SchemaError('schema', problems);
  }
  return rules;
}

function compileResource(resource: ResourceModel, problems: SchemaProblem[]): ResourceRules {
  const known = compiled.get(resource);
  if (known !== undefined) return known;
  const hasRules = Object.keys(resource.rules).length > 0 || Object.keys(resource.presets).length > 0 || [...resource.fields.values()].some((f) => f.read !== undefined || f.write !== undefined);
  if (!hasRules) {
    compiled.set(resource, NO_RULES);
    return NO_RULES;
  }
  const at = `resources.${resource.name}`;
  const before = problems.length;
  const expression = (text: string, path: string, operation: CompiledRule['operation']): CompiledRule | undefined => {
    const reading = readRuleExpression(text, resource);
    if (reading.problem === undefined) return { operation, text, template: toNegationNormalForm(reading.rule), usesNow: /@now\b/.test(text) };
    const where = reading.problem.includes(` at ${reading.offset}`) ? '' : ` (at character ${reading.offset})`;
    problems.push({ path, message: `in the rule ${JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)}: ${reading.problem}${where}` });
    return undefined;
  };
  const rows: Partial<Record<RuleOperation, CompiledRule>> = {};
  for (const operation of RULE_OPERATIONS) {
    const text = resource.rules[operation];
    if (text === undefined) continue;
    const rule = expression(text, `${at}.rules.${operation}`, operation);
    if (rule !== undefined) rows[operation] = rule;
  }
  if (rows.read === undefined && rows.list !== undefined) rows.read = { ...rows.list, operation: 'read' };
  const fieldRead = new Map<string, FieldAccess>();
  const fieldWrite = new Map<string, FieldAccess>();
  for (const field of resource.fields.values()) {
    for (const [kind, map] of [['read', fieldRead], ['write', fieldWrite]] as const) {
      const definition = field[kind];
      if (definition === undefined) continue;
      const path = `${at}.fields.${field.name}.${kind}`;
      if (kind === 'write' && field.system) problems.push({ path, message: `${field.name} is set by the server; no one writes it` });
      const access = accessRule(definition);
      if (access !== undefined) {
        map.set(field.name, { kind: 'access', rule: access, text: Array.isArray(definition) ? definition.join(', ') : definition });
        continue;
      }
      if (typeof definition !== 'string') continue;
      const rule = expression(definition, path, 'field');
      if (rule !== undefined) map.set(field.name, { kind: 'rule', rule });
    }
  }
  const presets = new Map<string, AuthReference>();
  for (const [name, text] of Object.entries(resource.presets)) {
    const path = `${at}.set.${name}`;
    const field = resource.fields.get(name);
    if (field === undefined) continue; // compileSchema reported it
    const reference = new AuthReference(text.replace(/^@/, '').split('.'), 0);
    const problem = !text.startsWith('@') ? 'is not a reference; expected @auth.sub or @auth.claims.<name>' : referenceProblem(reference.path);
    if (problem !== undefined || reference.name === 'auth.scopes' || reference.name === 'now' || field.type === 'json' || field.type === 'file') {
      problems.push({ path, message: `${JSON.stringify(text)} ${problem ?? `cannot fill ${name} (${field.type}); expected @auth.sub, @auth.kind or @auth.claims.<name>`}` });
      continue;
    }
    presets.set(name, reference);
  }
  if (problems.length > before) return NO_RULES;
  const rules: ResourceRules = { rows, fieldRead, fieldWrite, presets };
  compiled.set(resource, rules);
  return rules;
}

/** `public`, `authenticated` and scope lists are access rules; any other text is a rule expression. */
function accessRule(definition: FieldAccessDefinition): AccessRule | undefined {
  if (definition === 'public') return { kind: 'public' };
  if (definition === 'authenticated') return { kind: 'authenticated' };
  if (Array.isArray(definition)) return { kind: 'scopes', anyOf: definition };
  return undefined;
}

function nowText(): string {
  return new Date().toISOString();
}

/** What the row rule of `operation` comes to for `principal`: every row (true), none, or a condition. */
export function ruleOutcome(principal: Principal, resource: ResourceModel, operation: RuleOperation, now?: string): RuleOutcome {
  const rule = rulesOf(resource).rows[operation];
  return rule === undefined ? true : instantiateRule(rule.template, resource, principal, now ?? (rule.usesNow ? nowText() : ''));
}

/** A row rule as a filter the store compiles into its statement; undefined when it admits every row. */
export function ruleFilter(principal: Principal, resource: ResourceModel, operation: RuleOperation, now?: string): FilterCondition | undefined {
  const outcome = ruleOutcome(principal, resource, operation, now);
  if (outcome === true) return undefined;
  return outcome === false ? { field: 'id', op: 'none', value: null } : outcome;
}

/** Whether `record` passes the row rule of `operation` for `principal`. */
export function passesRule(principal: Principal, resource: ResourceModel, operation: RuleOperation, record: StoredRecord, now?: string): boolean {
  const outcome = ruleOutcome(principal, resource, operation, now);
  return typeof outcome === 'boolean' ? outcome : matchesFilter(outcome, record, resource);
}

/** The 403 of a write a row rule refuses, naming the rule. */
export function ruleRefusal(resource: ResourceModel, operation: RuleOperation, id?: RecordId): ForbiddenError {
  const text = rulesOf(resource).rows[operation]?.text ?? '';
  const what = id === undefined ? `this ${resource.singular}` : `${resource.singular} ${id}`;
  const verb = { list: 'list', read: 'read', create: 'create', update: 'change', delete: 'delete' }[operation];
  return new ForbiddenError(`The ${operation} rule of ${resource.name} does not let you ${verb} ${what}: ${text}`);
}

/**
 * @throws ForbiddenError when `record` (as stored, or before an update or delete) fails the rule of `operation`
 */
export function enforceRule(principal: Principal, resource: ResourceModel, operation: RuleOperation, record: StoredRecord, id?: RecordId): void {
  if (!passesRule(principal, resource, operation, record)) throw ruleRefusal(resource, operation, id);
}

/** Whether a field access (read or write) holds for this principal on every row (no row decides). */
export function fieldAccessOutcome(principal: Principal, resource: ResourceModel, access: FieldAccess | undefined, now?: string): RuleOutcome {
  if (access === undefined || isAdmin(principal)) return true;
  if (access.kind === 'rule') return instantiateRule(access.rule.template, resource, principal, now ?? (access.rule.usesNow ? nowText() : ''));
  const rule = access.rule;
  if (rule.kind === 'public') return true;
  if (principal.kind === 'anonymous') return false;
  return rule.kind === 'authenticated' || rule.anyOf.some((scope) => principal.scopes.has(scope));
}

/** The reference a preset fills `field` from, as a value of the field for this principal (undefined: the credential has none). */
export function presetValue(principal: Principal, resource: ResourceModel, field: FieldModel, reference: AuthReference): unknown {
  const value = referenceValue(reference, principal, nowText());
  return value === undefined ? undefined : fieldValue(field, value);
}

/** The credential values the schema's rules read, for grouping principals that see the same rows. */
export interface RuleReferences {
  subject: boolean;
  kind: boolean;
  scopes: boolean;
  /** Claim paths, each as `org` or `app.org`. */
  claims: string[];
}

const referencesOf = new WeakMap<SchemaModel, RuleReferences>();

/** Every credential value some rule of `schema` reads (rows, fields, presets). */
export function ruleReferences(schema: SchemaModel): RuleReferences {
  let found = referencesOf.get(schema);
  if (found !== undefined) return found;
  const claims = new Set<string>();
  found = { subject: false, kind: false, scopes: false, claims: [] };
  const visit = (value: unknown): void => {
    if (value instanceof AuthReference) note(value);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      const condition = value as Partial<RuleCondition> & { reference?: unknown };
      if (condition.reference instanceof AuthReference) note(condition.reference);
      visit(condition.value);
    }
  };
  const result = found;
  const note = (reference: AuthReference): void => {
    const [, member, ...claim] = reference.path;
    if (member === 'sub') result.subject = true;
    else if (member === 'kind') result.kind = true;
    else if (member === 'scopes') result.scopes = true;
    else if (member === 'claims') claims.add(claim.join('.'));
  };
  for (const resource of schema.resources.values()) {
    const rules = rulesOf(resource);
    for (const rule of Object.values(rules.rows)) visit(rule.template);
    for (const access of [...rules.fieldRead.values(), ...rules.fieldWrite.values()]) if (access.kind === 'rule') visit(access.rule.template);
    for (const reference of rules.presets.values()) note(reference);
  }
  result.claims = [...claims].sort();
  referencesOf.set(schema, result);
  return result;
}
