import { sql } from 'kysely';
import type { SqlDatabase, SqlExecutor, SqlRow } from './sql-database.js';
import { pruneOlderThan } from './time-ordered-prune.js';

const WEBHOOKS = '_restgraph_webhooks';
const DELIVERIES = '_restgraph_webhook_deliveries';
const ATTEMPTS = '_restgraph_webhook_attempts';
const STATE = '_restgraph_state';
/** Rows per INSERT of deliveries: 8 parameters each, well within SQLite's and PostgreSQL's limits on bound parameters. */
const DELIVERIES_PER_INSERT = 500;

export type WebhookStatus = 'active' | 'paused' | 'disabled';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookRecord {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  status: WebhookStatus;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * A claim of due deliveries: at `now` (ISO 8601), leased until `leaseUntil` (a lease: its end, then
 * a word of the claimer's). `unconfirmed` names leases of earlier claims whose outcome the claimer
 * never learnt: the deliveries they hold are claimed again at once.
 */
export interface DeliveryClaim {
  now: string;
  leaseUntil: string;
  unconfirmed?: readonly string[];
}

export interface DeliveryRecord {
  id: number;
  webhookId: number;
  eventId: number;
  eventType: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string;
  lastAttemptAt: string | null;
  responseStatus: number | null;
  lastError: string | null;
  createdAt: string;
}

export interface AttemptRecord {
  id: number;
  deliveryId: number;
  attemptedAt: string;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
}

/** Webhook endpoints, their deliveries (one per event and endpoint) and every attempt, in the database. */
export class WebhookStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  get db(): SqlDatabase {
    return this.#db;
  }

  async create(input: { url: string; events: string[]; description: string | null; secret: string }, now: string): Promise<WebhookRecord> {
    const rows = await this.#db.transaction((tx) =>
      tx.all(
        this.#db.builder
          .insertInto(WEBHOOKS)
          .values({ url: input.url, events: JSON.stringify(input.events), description: input.description, secret: input.secret, status: 'active', createdAt: now, updatedAt: now })
          .returningAll()
          .compile(),
      ),
    );
    return webhookOf(first(rows));
  }

  async list(): Promise<WebhookRecord[]> {
    return (await this.#db.all(this.#db.builder.selectFrom(WEBHOOKS).selectAll().orderBy('id').compile())).map(webhookOf);
  }

  async get(id: number): Promise<WebhookRecord | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(WEBHOOKS).selectAll().where('id', '=', id).compile());
    return row === undefined ? undefined : webhookOf(row);
  }

  /** Changes the given columns; resolves to the row after, or undefined when there is none. */
  async update(id: number, values: Partial<Omit<WebhookRecord, 'id' | 'createdAt'>>, now: string): Promise<WebhookRecord | undefined> {
    const set: Record<string, unknown> = { ...values, updatedAt: now };
    if (values.events !== undefined) set.events = JSON.stringify(values.events);
    const rows = await this.#db.transaction((tx) =>
      tx.all(this.#db.builder.updateTable(WEBHOOKS).set(set).where('id', '=', id).returningAll().compile()),
    );
    return rows[0] === undefined ? undefined : webhookOf(rows[0]);
  }

  /** Deletes an endpoint with its deliveries and attempts. */
  async delete(id: number): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      const ids = (await tx.all(this.#db.builder.selectFrom(DELIVERIES).select('id').where('webhookId', '=', id).compile())).map((r) => Number(r.id));
      for (let i = 0; i < ids.length; i += 500) {
        await tx.run(this.#db.builder.deleteFrom(ATTEMPTS).where('deliveryId', 'in', ids.slice(i, i + 500)).compile());
      }
      await tx.run(this.#db.builder.deleteFrom(DELIVERIES).where('webhookId', '=', id).compile());
      return (await tx.run(this.#db.builder.deleteFrom(WEBHOOKS).where('id', '=', id).compile())) > 0;
    });
  }

  /** A value of the state table (positions that must survive restarts). */
  async state(key: string): Promise<string | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(STATE).select('value').where('key', '=', key).compile());
    return row === undefined ? undefined : String(row.value);
  }

  async setState(tx: SqlExecutor, key: string, value: string): Promise<void> {
    await tx.run(
      this.#db.builder
        .insertInto(STATE)
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
        .compile(),
    );
  }

  /**
   * Saves a reader's position, unless a position further on is saved already: instances reading
   * the same events each save theirs, and the furthest one holds (every event before it has its
   * deliveries).
   */
  async advancePosition(tx: SqlExecutor, key: string, position: number): Promise<void> {
    await tx.run(
      this.#db.builder
        .insertInto(STATE)
        .values({ key, value: String(position) })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({ value: String(position) })
            .where(sql<boolean>`cast(${sql.ref(`${STATE}.value`)} as bigint) < ${position}`),
        )
        .compile(),
    );
  }

  /**
   * Adds deliveries; one that exists already (the same event for the same endpoint, added by
   * another instance reading the same events) is left as it is.
   */
  async addDeliveries(tx: SqlExecutor, deliveries: readonly Omit<DeliveryRecord, 'id' | 'lastAttemptAt' | 'responseStatus' | 'lastError'>[]): Promise<void> {
    // Many rows per statement (in order: ids follow it, and endpoints get their deliveries in event
    // order): one round trip for a batch of events, not one per delivery.
    for (let start = 0; start < deliveries.length; start += DELIVERIES_PER_INSERT) {
      await tx.run(
        this.#db.builder
          .insertInto(DELIVERIES)
          .values(deliveries.slice(start, start + DELIVERIES_PER_INSERT).map((d) => ({ ...d })))
          .onConflict((oc) => oc.columns(['webhookId', 'eventId']).doNothing())
          .compile(),
      );
    }
  }

  /** Deliveries waiting for an attempt (due now or later), of every endpoint (for metrics; an index range). */
  async pendingCount(): Promise<number> {
    const row = await this.#db.one(
      this.#db.builder.selectFrom(DELIVERIES).select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'pending').compile(),
    );
    return Number(row?.n ?? 0);
  }

  /**
   * The deliveries to attempt now, and leases them until `leaseUntil`: for each active endpoint,
   * its oldest pending delivery (one at a time per endpoint keeps them in event order), when it
   * is due and not leased by another attempt.
   *
   * A lease is a time (ISO 8601) followed by a word of the claimer's (`2026-…Z 3f9a…`): it ends
   * when `now` passes the time. `unconfirmed` names leases of earlier claims whose outcome the
   * claimer never learnt (the database's answer was lost, perhaps after the commit): the
   * deliveries they hold are claimed again now rather than when those leases end.
   */
  async claimDue(now: string, leaseUntil: string, limit: number, unconfirmed: readonly string[] = []): Promise<DeliveryRecord[]> {
    return this.#db.transaction((tx) => this.#claim(tx, { now, leaseUntil, unconfirmed }, limit));
  }

  /** claimDue's work in `tx`; only `webhookId`'s head when it is given. */
  async #claim(tx: SqlExecutor, claim: DeliveryClaim, limit: number, webhookId?: number): Promise<DeliveryRecord[]> {
    const { now, leaseUntil, unconfirmed = [] } = claim;
    // From each active endpoint to its oldest pending delivery (an index lookup each): the cost
    // follows the number of endpoints, not of deliveries ever made. Where several instances
    // share the database, a head another one is leasing right now is skipped, not waited for.
    // One statement: the heads chosen, and leased.
    const heads = await tx.all(
      sql`update ${sql.table(DELIVERIES)} set "leaseUntil" = ${leaseUntil} where "id" in (
            select d."id" from ${sql.table(WEBHOOKS)} w join ${sql.table(DELIVERIES)} d
            on d."id" = (select min(p."id") from ${sql.table(DELIVERIES)} p where p."status" = 'pending' and p."webhookId" = w."id")
            where w."status" = 'active'${webhookId === undefined ? sql`` : sql` and w."id" = ${webhookId}`} and d."nextAttemptAt" <= ${now} and (d."leaseUntil" is null or d."leaseUntil" < ${now}${unconfirmed.length === 0 ? sql`` : sql` or d."leaseUntil" in (${sql.join(unconfirmed)})`})
            order by d."id" limit ${limit}${this.#db.rules.skipLocked ? sql` for update of d skip locked` : sql``}
          ) returning *`.compile(this.#db.builder),
    );
    return heads.map(deliveryOf).sort((a, b) => a.id - b.id);
  }

  /**
   * Gives back a lease a claim took and will not use: its delivery's attempt was already under way
   * in this process (finishing after its outcome was recorded). Held, the lease would keep the
   * delivery, perhaps due for a retry, from every claim until it ended. Only that claim's lease.
   */
  async releaseLease(id: number, leaseUntil: string): Promise<void> {
    await this.#db.transaction((tx) => tx.run(this.#db.builder.updateTable(DELIVERIES).set({ leaseUntil: null }).where('id', '=', id).where('leaseUntil', '=', leaseUntil).compile()));
  }

  /**
   * Records an attempt and the delivery's new state, in one transaction. When a manual retry was
   * asked for while the attempt ran (the delivery's due time changed), the delivery stays pending
   * and due, so it is sent again.
   *
   * With `claimNext`, the same transaction then claims the endpoint's next delivery as claimDue
   * would (its oldest pending one, when the endpoint is active and that delivery due and not
   * leased): one commit per delivery instead of two while an endpoint's queue drains. Resolves to
   * it, or undefined.
   */
  async recordAttempt(
    delivery: { id: number; webhookId: number; attempts: number; nextAttemptAt: string },
    attempt: Omit<AttemptRecord, 'id' | 'deliveryId'>,
    next: { status: DeliveryStatus; nextAttemptAt: string },
    claimNext?: DeliveryClaim,
  ): Promise<DeliveryRecord | undefined> {
    const outcome = { leaseUntil: null, lastAttemptAt: attempt.attemptedAt, responseStatus: attempt.responseStatus, lastError: attempt.error };
    return this.#db.transaction(async (tx) => {
      await tx.run(this.#db.builder.insertInto(ATTEMPTS).values({ deliveryId: delivery.id, ...attempt }).compile());
      const changed = await tx.run(
        this.#db.builder
          .updateTable(DELIVERIES)
          .set({ ...outcome, status: next.status, attempts: delivery.attempts + 1, nextAttemptAt: next.nextAttemptAt })
          .where('id', '=', delivery.id)
          .where('nextAttemptAt', '=', delivery.nextAttemptAt)
          .compile(),
      );
      if (changed === 0) {
        await tx.run(this.#db.builder.updateTable(DELIVERIES).set({ ...outcome, attempts: delivery.attempts + 1 }).where('id', '=', delivery.id).compile());
      }
      if (claimNext === undefined) return undefined;
      return (await this.#claim(tx, claimNext, 1, delivery.webhookId))[0];
    });
  }

  /**
   * Deletes finished deliveries (succeeded or failed) created before `before` (ISO 8601), with
   * their attempts; pending ones stay, however old. Resolves to how many deliveries went.
   */
  async pruneFinished(before: string): Promise<number> {
    const finished = ['succeeded', 'failed'];
    return pruneOlderThan(this.#db, DELIVERIES, 'createdAt', before, {
      statuses: finished,
      beforeDelete: async (tx, from, to) => {
        const doomed = this.#db.builder.selectFrom(DELIVERIES).select('id').where('id', '>=', from).where('id', '<', to).where('status', 'in', finished);
        await tx.run(this.#db.builder.deleteFrom(ATTEMPTS).where('deliveryId', 'in', doomed).compile());
      },
    });
  }

  async deliveries(webhookId: number, limit: number): Promise<DeliveryRecord[]> {
    const rows = await this.#db.all(
      this.#db.builder.selectFrom(DELIVERIES).selectAll().where('webhookId', '=', webhookId).orderBy('id', 'desc').limit(limit).compile(),
    );
    return rows.map(deliveryOf);
  }

  async delivery(webhookId: number, id: number): Promise<DeliveryRecord | undefined> {
    const row = await this.#db.one(this.#db.builder.selectFrom(DELIVERIES).selectAll().where('id', '=', id).where('webhookId', '=', webhookId).compile());
    return row === undefined ? undefined : deliveryOf(row);
  }

  async attempts(deliveryIds: readonly number[]): Promise<AttemptRecord[]> {
    if (deliveryIds.length === 0) return [];
    const rows = await this.#db.all(this.#db.builder.selectFrom(ATTEMPTS).selectAll().where('deliveryId', 'in', [...deliveryIds]).orderBy('id').compile());
    return rows.map((r) => ({
      id: Number(r.id),
      deliveryId: Number(r.deliveryId),
      attemptedAt: String(r.attemptedAt),
      durationMs: Number(r.durationMs),
      responseStatus: r.responseStatus === null ? null : Number(r.responseStatus),
      error: textOrNull(r.error),
    }));
  }

  /**
   * Puts a delivery back to pending, due now (manual redelivery). One in flight keeps its lease
   * (never two attempts at once); its outcome then leaves it pending (see recordAttempt).
   */
  async retry(id: number, now: string): Promise<void> {
    await this.#db.transaction((tx) =>
      tx.run(this.#db.builder.updateTable(DELIVERIES).set({ status: 'pending', nextAttemptAt: now }).where('id', '=', id).compile()),
    );
  }
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function first(rows: SqlRow[]): SqlRow {
  const row = rows[0];
  if (row === undefined) throw new Error('expected a row');
  return row;
}

function webhookOf(row: SqlRow): WebhookRecord {
  return {
    id: Number(row.id),
    url: String(row.url),
    events: JSON.parse(String(row.events)) as string[],
    description: textOrNull(row.description),
    secret: String(row.secret),
    status: String(row.status) as WebhookStatus,
    disabledReason: textOrNull(row.disabledReason),
    failingSince: textOrNull(row.failingSince),
    createdAt: String(row.createdAt),
    updatedAt: String(row.updatedAt),
  };
}

function deliveryOf(row: SqlRow): DeliveryRecord {
  return {
    id: Number(row.id),
    webhookId: Number(row.webhookId),
    eventId: Number(row.eventId),
    eventType: String(row.eventType),
    payload: String(row.payload),
    status: String(row.status) as DeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: String(row.nextAttemptAt),
    lastAttemptAt: textOrNull(row.lastAttemptAt),
    responseStatus: row.responseStatus === null ? null : Number(row.responseStatus),
    lastError: textOrNull(row.lastError),
    createdAt: String(row.createdAt),
  };
}
