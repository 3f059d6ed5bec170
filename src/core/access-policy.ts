import { hasNul } from './storable-text.js';
import { AuthenticationRequiredError, ForbiddenError } from '../errors.js';
import type { AccessOperation, ResourceModel, RuleOperation, SchemaModel } from '../schema/schema-model.js';
import type { FilterCondition } from '../store/list-spec.js';
import { fieldAllowances, rowRuleAllowances, type FieldAllowance, type RuleAllowance } from './access-rules/rule-summary.js';
import { isAdmin, type Principal } from './principal.js';
import { ruleReferences } from './access-rules/access-rules.js';
import { referenceValue } from './access-rules/rule-instances.js';
import { AuthReference } from './filter-expression/auth-references.js';


/**
 * The access rules of the schema, applied in one place for every adapter: the operation's rule
 * (public, authenticated, or any one of a list of scopes; `admin` passes all) and the owner rule.
 */
/** Whether `principal` may read `resource` at all (its read rule; the owner rule still filters rows). */
export function canRead(principal: Principal, resource: ResourceModel): boolean {
  return permits(principal, resource, 'read');
}

/** Whether `principal` passes the rule of `operation` on `resource` (the owner rule still decides which rows). */
export function permits(principal: Principal, resource: ResourceModel, operation: AccessOperation): boolean {
  if (isAdmin(principal)) return true;
  const rule = resource.access[operation];
  if (rule.kind === 'public') return true;
  if (principal.kind === 'anonymous') return false;
  return rule.kind === 'authenticated' || hasAnyScope(principal, rule.anyOf);
}

export function authorize(principal: Principal, resource: ResourceModel, operation: AccessOperation): void {
  if (isAdmin(principal)) return;
  const rule = resource.access[operation];
  if (rule.kind === 'public') return;
  if (principal.kind === 'anonymous') {
    throw new AuthenticationRequiredError(`${verb(operation)} ${resource.name} needs a token: send Authorization: Bearer <token>.`);
  }
  if (rule.kind === 'authenticated') return;
  if (!hasAnyScope(principal, rule.anyOf)) {
    throw new ForbiddenError(`${verb(operation)} ${resource.name} needs one of the scopes ${rule.anyOf.join(', ')}; this token has ${[...principal.scopes].join(', ') || 'none'}.`, rule.anyOf);
  }
}

/** Which credential values decide what a principal sees under a schema, beyond its scopes (computed once per schema). */
interface VisibilityParts {
  /** An owner rule or a rule reads the subject. */
  subject: boolean;
  /** A rule reads `@auth.kind`. */
  kind: boolean;
  /** The claims rules read, as references (`@auth.claims.org`). */
  claims: readonly AuthReference[];
}

const visibilityParts = new WeakMap<SchemaModel, VisibilityParts>();

function visibilityPartsOf(schema: SchemaModel): VisibilityParts {
  let parts = visibilityParts.get(schema);
  if (parts === undefined) {
    const references = ruleReferences(schema);
    parts = {
      subject: references.subject || [...schema.resources.values()].some((r) => r.owner !== undefined),
      kind: references.kind,
      claims: references.claims.map((path) => new AuthReference(['auth', 'claims', ...path.split('.')], 0)),
    };
    visibilityParts.set(schema, parts);
  }
  return parts;
}

/**
 * What decides which rows `principal` sees under the rules of `schema`: principals with the same
 * key pass the same access rules and get the same rows, fields and errors from every read (so one
 * execution may serve them all). Admin sees everything; otherwise whether it is anonymous, its
 * scopes, and each credential value the schema's rules read (docs/auth.md#rules): the subject
 * (also for owner rules), the kind, each claim they name. Schemas without rules pay for none of these.
 */
export function visibilityKey(principal: Principal, schema: SchemaModel): string {
  if (isAdmin(principal)) return 'admin';
  const parts = visibilityPartsOf(schema);
  // Each part keeps apart what the rules keep apart: the scopes as a list (a JWT's array claim may
  // hold a scope with a space in it, which is not the two scopes it spells), and an absent value
  // as null, which no present value encodes to (a claim that is null counts as absent, as in the
  // rules; "null" the text is a string; objects and arrays are their JSON): the absent subject owns
  // nothing, where the subject "" would own the rows whose owner is "".
  const key: unknown[] = [principal.kind === 'anonymous', [...principal.scopes].sort(), parts.subject ? (principal.subject ?? null) : null];
  if (parts.kind) key.push(referenceValue(KIND, principal, ''));
  for (const claim of parts.claims) key.push(referenceValue(claim, principal, '') ?? null);
  return JSON.stringify(key);
}

const KIND = new AuthReference(['auth', 'kind'], 0);

/** Whether the principal holds one of the scopes (a loop, not .some(): every request asks). */
function hasAnyScope(principal: Principal, scopes: readonly string[]): boolean {
  for (const scope of scopes) if (principal.scopes.has(scope)) return true;
  return false;
}

/**
 * The filter the owner rule adds to reads of `resource` for this principal, or undefined when
 * every row is visible (no owner rule, admin, or public reads).
 */
export function ownerReadFilter(principal: Principal, resource: ResourceModel): FilterCondition | undefined {
  if (resource.owner === undefined || isAdmin(principal) || resource.access.read.kind === 'public') return undefined;
  return ownerFilter(principal, resource, resource.owner);
}

/** The filter that limits writes to the principal's own rows, or undefined when unrestricted. */
export function ownerWriteFilter(principal: Principal, resource: ResourceModel): FilterCondition | undefined {
  if (resource.owner === undefined || isAdmin(principal)) return undefined;
  return ownerFilter(principal, resource, resource.owner);
}

/** Whether a row passes a filter built by this module (equality on one field). */
export function rowPasses(row: Record<string, unknown>, filter: FilterCondition | undefined): boolean {
  return filter === undefined || (filter.op !== 'none' && row[filter.field] === filter.value);
}

/**
 * The owner value to store for this principal's new rows, typed like the owner field; undefined
 * when no owner rule applies.
 * @throws ForbiddenError when the principal's subject cannot own rows (absent, or not an integer for an integer field).
 */
export function ownerValue(principal: Principal, resource: ResourceModel): string | number | undefined {
  const filter = ownerWriteFilter(principal, resource);
  if (filter === undefined) return undefined;
  if (filter.op === 'none') {
    const why = principal.subject === undefined ? 'has no subject' : `has the subject ${JSON.stringify(principal.subject)}, which is not a valid ${filter.field}`;
    throw new ForbiddenError(`This token ${why}, so it cannot own ${resource.name}.`);
  }
  return filter.value as string | number;
}

function ownerFilter(principal: Principal, resource: ResourceModel, owner: string): FilterCondition {
  const field = resource.fields.get(owner);
  const subject = principal.subject;
  if (field?.type === 'integer') {
    const id = subject !== undefined && /^-?\d{1,15}$/.test(subject) ? Number(subject) : Number.NaN;
    return Number.isSafeInteger(id) ? { field: owner, op: 'eq', value: id } : nobody(owner);
  }
  // A subject no owner field can hold (a JWT's sub with U+0000) owns nothing either.
  return subject === undefined || hasNul(subject) ? nobody(owner) : { field: owner, op: 'eq', value: subject };
}

/** A principal without a (suitable) subject owns nothing: no row passes. */
function nobody(owner: string): FilterCondition {
  return { field: owner, op: 'none', value: null };
}

function verb(operation: AccessOperation): string {
  return { read: 'Reading', create: 'Creating', update: 'Changing', delete: 'Deleting' }[operation];
}

/** What a credential may do with one resource, as GET /v1/auth/me tells it. */
export type ResourceAccessSummary = Record<AccessOperation, boolean> & {
  owner: string | null;
  /** Present when the resource has row rules: per operation, every row, none, or the rows its rule admits. */
  rules?: Record<RuleOperation, RuleAllowance>;
  /** Present when some field has a `read` or `write` access of its own: per such field. */
  fields?: Record<string, FieldAllowance>;
};

/** What a credential is and may do, as GET /v1/auth/me tells it. */
export interface AccessSummary {
  kind: Principal['kind'];
  subject: string | null;
  scopes: string[];
  /** The values rules read as `@auth.claims.<name>` (a JWT's payload, an API key's claims); absent when none. */
  claims?: Readonly<Record<string, unknown>>;
  admin: boolean;
  /**
   * Per resource: whether this credential may do each operation to some row (its `access` passes
   * and, where the resource has row rules, the rule is not false for every row), its owner field
   * (rows of other subjects stay out of reach), and, where the schema has them, its row rules and
   * field access as they come to for this credential.
   */
  resources: Record<string, ResourceAccessSummary>;
  /** API keys and webhooks are managed by admins. */
  manage: { tokens: boolean; webhooks: boolean };
}

/**
 * What `principal` may do under `schema`'s rules, so a client offers only what will pass (the
 * server still checks every request).
 */
export function accessSummary(principal: Principal, schema: SchemaModel): AccessSummary {
  const admin = isAdmin(principal);
  const resources: AccessSummary['resources'] = {};
  for (const resource of schema.resources.values()) {
    const gate = (operation: RuleOperation): boolean => permits(principal, resource, operation === 'list' ? 'read' : operation);
    const rules = rowRuleAllowances(principal, resource, gate);
    const may = (operation: RuleOperation): boolean => (rules === undefined ? gate(operation) : rules[operation].allowed !== false);
    const fields = fieldAllowances(principal, resource);
    resources[resource.name] = {
      read: may('list') || may('read'),
      create: may('create'),
      update: may('update'),
      delete: may('delete'),
      owner: admin ? null : (resource.owner ?? null),
      ...(rules === undefined ? {} : { rules }),
      ...(fields === undefined ? {} : { fields }),
    };
  }
  return {
    kind: principal.kind,
    subject: principal.subject ?? null,
    scopes: [...principal.scopes].sort(),
    ...(principal.claims === undefined ? {} : { claims: principal.claims }),
    admin,
    resources,
    manage: { tokens: admin, webhooks: admin },
  };
}
