import { hasNul } from './storable-text.js';
import { AuthenticationRequiredError, ForbiddenError } from '../errors.js';
import type { AccessOperation, ResourceModel, SchemaModel } from '../schema/schema-model.js';
import type { FilterCondition } from '../store/list-spec.js';
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

/** Schemas with an owner rule on some resource (where a principal's subject decides what it sees). */
const schemasWithOwners = new WeakMap<SchemaModel, boolean>();

/**
 * What decides which rows `principal` sees under the rules of `schema`: principals with the same
 * key pass the same access rules and get the same rows and errors from every read (so one
 * execution may serve them all). Admin sees everything; otherwise whether it is anonymous, its
 * scopes, its subject where a resource has an owner rule or an access rule reads @auth.sub, and
 * the kind and each claim the access rules read (ruleReferences).
 */
export function visibilityKey(principal: Principal, schema: SchemaModel): string {
  if (isAdmin(principal)) return 'admin';
  let owners = schemasWithOwners.get(schema);
  if (owners === undefined) schemasWithOwners.set(schema, (owners = [...schema.resources.values()].some((r) => r.owner !== undefined)));
  // Each part keeps apart what the rules keep apart: the scopes as a list (a JWT's array claim may
  // hold a scope with a space in it, which is not the two scopes it spells), and an absent subject
  // as null (it owns nothing, where the subject "" would own the rows whose owner is "").
  // The access rules' references too (docs/auth.md#rules): the subject, the kind and each claim
  // they read, an absent claim ([]) apart from every present value ([value]).
  const references = ruleReferences(schema);
  const subject = owners || references.subject ? (principal.subject ?? null) : null;
  const kind = references.kind ? principal.kind : null;
  const claims = references.claims.map((path) => {
    const value = referenceValue(new AuthReference(['auth', 'claims', ...path.split('.')], 0), principal, '');
    return value === undefined ? [] : [value];
  });
  return JSON.stringify([principal.kind === 'anonymous', [...principal.scopes].sort(), subject, kind, claims]);
}

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

/** What a credential is and may do, as GET /v1/auth/me tells it. */
export interface AccessSummary {
  kind: Principal['kind'];
  subject: string | null;
  scopes: string[];
  admin: boolean;
  /** Per resource, which operations its rules let this credential attempt, and its owner field (rows of other subjects stay out of reach). */
  resources: Record<string, Record<AccessOperation, boolean> & { owner: string | null }>;
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
    resources[resource.name] = {
      read: permits(principal, resource, 'read'),
      create: permits(principal, resource, 'create'),
      update: permits(principal, resource, 'update'),
      delete: permits(principal, resource, 'delete'),
      owner: admin ? null : (resource.owner ?? null),
    };
  }
  return { kind: principal.kind, subject: principal.subject ?? null, scopes: [...principal.scopes].sort(), admin, resources, manage: { tokens: admin, webhooks: admin } };
}
