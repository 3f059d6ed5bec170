import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api.js';
import type { SchemaInfo } from './schema.js';

/** What a rule allows the token: every row, none, or the rows `rule` admits. */
export type RuleAllowance = { allowed: true } | { allowed: false } | { allowed: 'rule'; rule: string };

export type RuleOperation = 'list' | 'read' | 'create' | 'update' | 'delete';

/** What the token may do with one resource. */
export interface ResourceAccess {
  read: boolean;
  create: boolean;
  update: boolean;
  delete: boolean;
  owner: string | null;
  /** Present when the resource has row rules. */
  rules?: Record<RuleOperation, RuleAllowance>;
  /** Present when some field has read or write access of its own: per such field. */
  fields?: Record<string, { read: RuleAllowance; write: RuleAllowance }>;
}

/** What `GET /v1/auth/me` says the token is and may do (docs/auth.md#what-a-token-may-do). */
export interface AccessSummary {
  kind: 'anonymous' | 'api-key' | 'jwt' | 'admin-token';
  subject: string | null;
  scopes: string[];
  claims?: Record<string, unknown>;
  admin: boolean;
  resources: Record<string, ResourceAccess>;
  manage: { tokens: boolean; webhooks: boolean };
}

/** A signed-in console: the API with its token, what the token may do, the schema. */
export interface Session {
  api: Api;
  me: AccessSummary;
  schema: SchemaInfo;
  /** Forgets the token and shows the sign-in form, with `notice` said there when given. */
  signOut: (notice?: string) => void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === undefined) throw new Error('useSession outside a signed-in console');
  return session;
}

/** What the token may do with a resource (nothing when /v1/auth/me does not name it). */
export function accessTo(me: AccessSummary, resource: string): ResourceAccess {
  return me.resources[resource] ?? { read: false, create: false, update: false, delete: false, owner: null };
}
