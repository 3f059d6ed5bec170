import { readRestricted } from '../core/access-rules/field-reads.js';
import type { AccessRule } from '../schema/schema-model.js';
import { BEARER } from './common-components.js';
import type { SecurityRequirement } from './openapi-types.js';
import type { Failures } from './problem-responses.js';
import type { ResourceView } from './versioned-view.js';

/** What an operation needs: every one of `rules` must pass (a relation route reads two resources). */
export interface OperationAccess {
  security: SecurityRequirement[];
  /** Whether a request without a token may succeed. */
  isPublic: boolean;
  /** One sentence for the operation's description. */
  sentence: string;
}

/** Only tokens with the admin scope (/v1/tokens, /v1/webhooks). */
export const ADMIN_ONLY: AccessRule = { kind: 'scopes', anyOf: ['admin'] };

/**
 * The security requirements of an operation whose access rules are `rules` (all must pass). OpenAPI
 * lists alternatives, each needing all its scopes; a rule's "any one of these scopes" is one
 * alternative per scope, and two rules multiply. Public operations also take a token (it must then
 * be valid). The admin scope passes every rule; the scheme's description says so once.
 */
export function operationAccess(rules: readonly AccessRule[]): OperationAccess {
  const scoped = rules.filter((r): r is Extract<AccessRule, { kind: 'scopes' }> => r.kind === 'scopes');
  if (scoped.length === 0) {
    if (rules.every((r) => r.kind === 'public')) {
      return { security: [{}, { [BEARER]: [] }], isPublic: true, sentence: 'Access: public (no token needed; a token sent must be valid).' };
    }
    return { security: [{ [BEARER]: [] }], isPublic: false, sentence: 'Access: any valid token.' };
  }
  let alternatives: string[][] = [[]];
  for (const rule of scoped) alternatives = alternatives.flatMap((chosen) => rule.anyOf.map((scope) => [...new Set([...chosen, scope])]));
  const unique = new Map(alternatives.map((scopes) => [[...scopes].sort().join(' '), scopes]));
  const sentence =
    scoped.length === 1
      ? `Access: a token with one of the scopes ${scoped[0]?.anyOf.join(', ') ?? ''} (or admin).`
      : `Access: a token with ${scoped.map((r) => `one of ${r.anyOf.join(', ')}`).join(', and ')} (or admin).`;
  return { security: [...unique.values()].map((scopes) => ({ [BEARER]: scopes })), isPublic: false, sentence };
}

/**
 * The 401 and 403 an operation under `rules` may answer. A credential that is sent must be valid
 * even where none is needed (401 invalid-token); `ownerRule` adds the owner rule's 403 on writes.
 */
export function accessFailures(rules: readonly AccessRule[], ownerRule = false): Failures {
  const needsToken = rules.some((r) => r.kind !== 'public');
  const scoped = rules.some((r) => r.kind === 'scopes');
  return {
    401: needsToken ? ['authentication-required', 'invalid-token'] : ['invalid-token'],
    ...(scoped || ownerRule ? { 403: ['forbidden'] } : {}),
  };
}

/**
 * The 403 of a read whose filters, sort, search, groups or relations may use a field that field
 * access hides from some credentials: one of `resource`'s, or of a resource its relations reach.
 */
export function fieldReadFailures(resource: ResourceView): Failures {
  const reached = new Set<ResourceView>([resource]);
  for (const view of reached) {
    if (view.fields.some((f) => readRestricted(f.model))) return { 403: ['forbidden'] };
    for (const relation of view.relations) reached.add(relation.target);
  }
  return {};
}
