import type { SqlDialectRules } from './sql-dialect-rules.js';

/**
 * Tables restgraph keeps for itself. Their names start with `_restgraph_`, which no resource name
 * can (resource names start with a lowercase letter). The same tables on every database; only the
 * auto-assigned id column is spelled differently.
 *
 * Their layout changes only by a new numbered migration appended to {@link SYSTEM_MIGRATIONS};
 * a migration, once released, is never edited (databases out there have run it).
 */
export interface SystemMigration {
  /** 1, 2, 3 …: applied in this order, each once, recorded in `_restgraph_system_migrations`. */
  readonly version: number;
  /** What it does, in a few words (recorded with the version). */
  readonly name: string;
  /** Its statements, one per string, run in one transaction with the record of its version. */
  readonly statements: (rules: SqlDialectRules) => readonly string[];
}

/**
 * Version 1: the tables as releases before numbered migrations created them, statement for
 * statement (`if not exists` everywhere). A database those releases made already holds them, so
 * on it this migration changes nothing and only records version 1: the database is adopted.
 */
function firstRelease(rules: SqlDialectRules): string[] {
  const id = rules.idColumnDefinition();
  return [
    `create table if not exists "_restgraph_migrations" (
      ${id},
      "appliedAt" text not null,
      "schema" text not null,
      "changes" text not null
    )`,
    `create table if not exists "_restgraph_idempotency_keys" (
      "scope" text not null,
      "key" text not null,
      "fingerprint" text not null,
      "state" text not null,
      "status" integer,
      "headers" text,
      "body" text,
      "createdAt" text not null,
      "expiresAt" text not null,
      primary key ("scope", "key")
    )`,
    `create index if not exists "rg_ix_idempotency_expires" on "_restgraph_idempotency_keys" ("expiresAt")`,
    `create table if not exists "_restgraph_api_keys" (
      ${id},
      "name" text not null,
      "prefix" text not null,
      "hash" text not null unique,
      "scopes" text not null,
      "subject" text,
      "createdAt" text not null,
      "lastUsedAt" text,
      "expiresAt" text,
      "revokedAt" text
    )`,
    `create table if not exists "_restgraph_events" (
      ${id},
      "type" text not null,
      "resource" text not null,
      "recordId" bigint not null,
      "data" text not null,
      "occurredAt" text not null
    )`,
    // Pruning finds old events by id (see EventStore.prune): no index every write would pay for.
    `drop index if exists "rg_ix_events_occurred"`,
    `create table if not exists "_restgraph_state" (
      "key" text primary key,
      "value" text not null
    )`,
    `create table if not exists "_restgraph_webhooks" (
      ${id},
      "url" text not null,
      "events" text not null,
      "description" text,
      "secret" text not null,
      "status" text not null,
      "disabledReason" text,
      "failingSince" text,
      "createdAt" text not null,
      "updatedAt" text not null
    )`,
    `create table if not exists "_restgraph_webhook_deliveries" (
      ${id},
      "webhookId" bigint not null,
      "eventId" bigint not null,
      "eventType" text not null,
      "payload" text not null,
      "status" text not null,
      "attempts" integer not null,
      "nextAttemptAt" text not null,
      "leaseUntil" text,
      "lastAttemptAt" text,
      "responseStatus" integer,
      "lastError" text,
      "createdAt" text not null
    )`,
    `create index if not exists "rg_ix_deliveries_due" on "_restgraph_webhook_deliveries" ("status", "webhookId", "id")`,
    // One delivery per event and endpoint, whichever instances read the event.
    `create unique index if not exists "rg_uq_deliveries_event" on "_restgraph_webhook_deliveries" ("webhookId", "eventId")`,
    `create table if not exists "_restgraph_webhook_attempts" (
      ${id},
      "deliveryId" bigint not null,
      "attemptedAt" text not null,
      "durationMs" integer not null,
      "responseStatus" integer,
      "error" text
    )`,
    `create index if not exists "rg_ix_attempts_delivery" on "_restgraph_webhook_attempts" ("deliveryId")`,
    // Rate-limit counters shared by instances (RESTGRAPH_RATE_LIMIT_STORE=database); keys name their window.
    `create table if not exists "_restgraph_rate_limits" (
      "key" text primary key,
      "used" bigint not null,
      "expiresAt" bigint not null
    )`,
    `create index if not exists "rg_ix_rate_limits_expires" on "_restgraph_rate_limits" ("expiresAt")`,
  ];
}

/** Same statements on every database. */
function everywhere(statements: readonly string[]): () => readonly string[] {
  return () => statements;
}

/** Every migration of the internal tables, in version order. Append; never edit or reorder. */
export const SYSTEM_MIGRATIONS: readonly SystemMigration[] = [
  {
    version: 1,
    name: 'internal tables as first released',
    statements: firstRelease,
  },
  {
    version: 2,
    name: 'idempotency claims carry a fencing token',
    // The token of the request holding an in-flight key: its completion and release match it, so
    // a request whose key was taken over changes nothing (null: a claim made before version 2).
    statements: everywhere([`alter table "_restgraph_idempotency_keys" add column "claim" text`]),
  },
  {
    version: 3,
    name: 'api keys carry claims',
    // JSON of the key's claims, read by access rules as @auth.claims.<name> (null: none, as every
    // key made before this version).
    statements: everywhere([`alter table "_restgraph_api_keys" add column "claims" text`]),
  },
  {
    version: 4,
    name: 'one-time tokens for account emails',
    // Email verification and password reset links (store/one-time-token-store.ts): the token's
    // SHA-256 only, its account and purpose, its expiry, and when it was used (null: not yet).
    statements: oneTimeTokens,
  },
  {
    version: 5,
    name: 'end-user accounts: credentials, refresh tokens, signing keys',
    statements: accountTables,
  },
  {
    version: 6,
    name: 'account states: disabled, sessions valid after',
    statements: accountStates,
  },
];

/** Version 4: the table of single-use tokens, found by their hash; pruned by id (creation order). */
function oneTimeTokens(rules: SqlDialectRules): string[] {
  return [
    `create table "_restgraph_one_time_tokens" (
      ${rules.idColumnDefinition()},
      "purpose" text not null,
      "accountId" text not null,
      "hash" text not null unique,
      "createdAt" text not null,
      "expiresAt" text not null,
      "usedAt" text
    )`,
    `create index "rg_ix_one_time_tokens_account" on "_restgraph_one_time_tokens" ("accountId", "purpose")`,
  ];
}

/**
 * Version 5: what accounts (docs/accounts.md) keep apart from the resource's fields. Credentials
 * are keyed by the account's resource and record id, and remember the record's `createdAt`, so
 * that a record made later under a reused id never inherits them. Refresh tokens are stored as
 * SHA-256; signing keys as JWKs.
 */
function accountTables(rules: SqlDialectRules): string[] {
  const id = rules.idColumnDefinition();
  return [
    `create table "_restgraph_credentials" (
      "resource" text not null,
      "recordId" bigint not null,
      "recordCreatedAt" text not null,
      "passwordHash" text,
      "emailVerifiedAt" text,
      "updatedAt" text not null,
      primary key ("resource", "recordId")
    )`,
    `create table "_restgraph_refresh_tokens" (
      ${id},
      "hash" text not null unique,
      "family" text not null,
      "resource" text not null,
      "recordId" bigint not null,
      "createdAt" text not null,
      "expiresAt" text not null,
      "usedAt" text,
      "revokedAt" text
    )`,
    `create index "rg_ix_refresh_tokens_family" on "_restgraph_refresh_tokens" ("family")`,
    `create index "rg_ix_refresh_tokens_account" on "_restgraph_refresh_tokens" ("resource", "recordId")`,
    `create table "_restgraph_signing_keys" (
      "kid" text primary key,
      "algorithm" text not null,
      "privateKey" text not null,
      "publicKey" text not null,
      "createdAt" text not null,
      "retiredAt" text
    )`,
  ];
}

/**
 * Version 6: what an admin sets on an account (store/account-state-store.ts): disabled since when,
 * and the instant before which its access tokens are refused (disable, force sign-out, sign-out
 * everywhere, password change and reset). Keyed like credentials, with the record's `createdAt`.
 */
function accountStates(): string[] {
  return [
    `create table "_restgraph_account_states" (
      "resource" text not null,
      "recordId" bigint not null,
      "recordCreatedAt" text not null,
      "disabledAt" text,
      "sessionsValidAfter" text,
      "updatedAt" text not null,
      primary key ("resource", "recordId")
    )`,
  ];
}

/** One of restgraph's own tables as this release lays it out (after every migration above). */
export interface SystemTableLayout {
  readonly name: string;
  /** Every column, in the order the migrations made them. */
  readonly columns: readonly string[];
  /** The columns that tell its rows apart (its primary key). */
  readonly key: readonly string[];
  /** Its `id` comes from the database's generator ({@link SqlDialectRules.idColumnDefinition}). */
  readonly generatedId: boolean;
}

/**
 * The tables that hold restgraph's own data, as the migrations above leave them: what a copy of
 * a whole database (`restgraph copy`) carries besides the records. Every table but
 * `_restgraph_system_migrations`, which records the layout itself. A new migration that adds a
 * table or a column changes this list too (test/system-tables.test.ts compares the two).
 */
export const SYSTEM_DATA_TABLES: readonly SystemTableLayout[] = [
  { name: '_restgraph_migrations', columns: ['id', 'appliedAt', 'schema', 'changes'], key: ['id'], generatedId: true },
  {
    name: '_restgraph_idempotency_keys',
    columns: ['scope', 'key', 'fingerprint', 'state', 'status', 'headers', 'body', 'createdAt', 'expiresAt', 'claim'],
    key: ['scope', 'key'],
    generatedId: false,
  },
  {
    name: '_restgraph_api_keys',
    columns: ['id', 'name', 'prefix', 'hash', 'scopes', 'subject', 'createdAt', 'lastUsedAt', 'expiresAt', 'revokedAt', 'claims'],
    key: ['id'],
    generatedId: true,
  },
  { name: '_restgraph_events', columns: ['id', 'type', 'resource', 'recordId', 'data', 'occurredAt'], key: ['id'], generatedId: true },
  { name: '_restgraph_state', columns: ['key', 'value'], key: ['key'], generatedId: false },
  {
    name: '_restgraph_webhooks',
    columns: ['id', 'url', 'events', 'description', 'secret', 'status', 'disabledReason', 'failingSince', 'createdAt', 'updatedAt'],
    key: ['id'],
    generatedId: true,
  },
  {
    name: '_restgraph_webhook_deliveries',
    columns: ['id', 'webhookId', 'eventId', 'eventType', 'payload', 'status', 'attempts', 'nextAttemptAt', 'leaseUntil', 'lastAttemptAt', 'responseStatus', 'lastError', 'createdAt'],
    key: ['id'],
    generatedId: true,
  },
  { name: '_restgraph_webhook_attempts', columns: ['id', 'deliveryId', 'attemptedAt', 'durationMs', 'responseStatus', 'error'], key: ['id'], generatedId: true },
  { name: '_restgraph_rate_limits', columns: ['key', 'used', 'expiresAt'], key: ['key'], generatedId: false },
  {
    name: '_restgraph_one_time_tokens',
    columns: ['id', 'purpose', 'accountId', 'hash', 'createdAt', 'expiresAt', 'usedAt'],
    key: ['id'],
    generatedId: true,
  },
  {
    name: '_restgraph_credentials',
    columns: ['resource', 'recordId', 'recordCreatedAt', 'passwordHash', 'emailVerifiedAt', 'updatedAt'],
    key: ['resource', 'recordId'],
    generatedId: false,
  },
  {
    name: '_restgraph_refresh_tokens',
    columns: ['id', 'hash', 'family', 'resource', 'recordId', 'createdAt', 'expiresAt', 'usedAt', 'revokedAt'],
    key: ['id'],
    generatedId: true,
  },
  { name: '_restgraph_signing_keys', columns: ['kid', 'algorithm', 'privateKey', 'publicKey', 'createdAt', 'retiredAt'], key: ['kid'], generatedId: false },
  {
    name: '_restgraph_account_states',
    columns: ['resource', 'recordId', 'recordCreatedAt', 'disabledAt', 'sessionsValidAfter', 'updatedAt'],
    key: ['resource', 'recordId'],
    generatedId: false,
  },
];
