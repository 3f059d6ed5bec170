import type { RateLimits } from '../core/rate-limits.js';
import { resourceNamed, type SchemaModel } from '../schema/schema-model.js';
import { ApiKeyStore } from '../store/api-key-store.js';
import { EventStore } from '../store/event-store.js';
import { IdempotencyStore } from '../store/idempotency-store.js';
import { migrateToSchema, type MigrationChange } from '../store/migrate.js';
import { parseRecordId, type RecordId } from '../schema/record-key.js';
import { openMappedDatabase } from './mapped-storage.js';
import { OneTimeTokenStore } from '../store/one-time-token-store.js';
import { openDatabase } from '../store/open-database.js';
import { RecordStore } from '../store/record-store.js';
import type { SqlDatabase } from '../store/sql-database.js';
import type { SqlDialectRules } from '../store/sql-dialect-rules.js';
import { WebhookStore } from '../store/webhook-store.js';
import type { ResolvedOptions } from './app-options.js';
import type { Lifecycle } from './lifecycle.js';
import { createRateLimits } from './rate-limit-setup.js';

/** The database, migrated to the schema, and the stores over it. */
export interface Storage {
  db: SqlDatabase;
  rules: SqlDialectRules;
  /** Where the data lives, for log lines (no credentials). */
  description: string;
  records: RecordStore;
  events: EventStore;
  idempotency: IdempotencyStore;
  apiKeys: ApiKeyStore;
  webhooks: WebhookStore;
  /** Single-use tokens of account email links (verification, password reset). */
  oneTimeTokens: OneTimeTokenStore;
  /** The rate limits with their counters, when any quota applies. */
  rateLimits: RateLimits | undefined;
  /** The schema changes this start applied to the database (none when it had the schema already). */
  schemaChanges: MigrationChange[];
  /** What the start-up check of a mapped database found worth saying (columns it does not serve). */
  warnings: string[];
}

/**
 * Opens the database of `options`, brings it to the schema, and opens the rate-limit counters;
 * each registers its close with `lifecycle`.
 *
 * @throws ConfigError, DestructiveMigrationError, MigrationFailedError
 */
export async function openStorage(options: ResolvedOptions, schema: SchemaModel, lifecycle: Lifecycle): Promise<Storage> {
  const bounds = options.database;
  const openOptions = {
    ...(options.onSqlStatement === undefined ? {} : { onStatement: options.onSqlStatement }),
    postgres: { connectMs: bounds.connectTimeoutMs, statementMs: bounds.statementTimeoutMs, idleInTransactionMs: bounds.idleInTransactionTimeoutMs, queryMs: bounds.queryTimeoutMs },
    sqlite: { lockTimeoutMs: bounds.sqliteLockTimeoutMs, synchronous: bounds.sqliteSynchronous },
  };
  // A mapped database's tables are not restgraph's to migrate: checked against the catalog instead.
  const mapped = schema.mapping === undefined ? undefined : await openMappedDatabase(options.databaseUrl, schema, options.systemSchema, openOptions);
  const { db, rules, description } = mapped ?? (await openDatabase(options.databaseUrl, openOptions));
  lifecycle.add(() => db.close());
  const schemaChanges = mapped === undefined ? await migrateToSchema(db, rules, schema, { allowDestructive: options.allowDestructiveMigrations }) : [];
  const rateLimits = await createRateLimits(options.rateLimits, schema, db);
  if (rateLimits !== undefined) lifecycle.add(() => rateLimits.limiter.close());
  return {
    db,
    rules,
    description,
    records: new RecordStore(db, rules, (name) => resourceNamed(schema, name)),
    events: new EventStore(db, mapped === undefined ? undefined : (resource, stored) => storedRecordId(schema, resource, stored)),
    idempotency: new IdempotencyStore(db, { ttlMs: options.idempotencyTtlMs, abandonAfterMs: options.idempotencyClaimTimeoutMs }),
    apiKeys: new ApiKeyStore(db),
    webhooks: new WebhookStore(db),
    oneTimeTokens: new OneTimeTokenStore(db),
    rateLimits,
    schemaChanges,
    warnings: mapped?.warnings ?? [],
  };
}

/** An event's stored `recordId` as its record's name (a mapped table's key is stored as its text). */
function storedRecordId(schema: SchemaModel, resource: string, stored: unknown): RecordId {
  const model = schema.resources.get(resource);
  if (model === undefined) return Number(stored);
  return parseRecordId(model, String(stored)) ?? String(stored);
}
