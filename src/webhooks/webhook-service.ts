import type { EventDispatcher } from '../core/event-dispatcher.js';
import type { Principal } from '../core/principal.js';
import { requireAdmin } from '../core/token-operations.js';
import { NotFoundError } from '../errors.js';
import type { SchemaModel } from '../schema/schema-model.js';
import type { AttemptRecord, DeliveryRecord, WebhookRecord, WebhookStore } from '../store/webhook-store.js';
import { newSecret } from './signing.js';
import { WebhookDeliveryWorker, type WebhookLog, type WebhookOptions, type WebhookOutcome } from './webhook-delivery-worker.js';
import { WebhookFeeder } from './webhook-feeder.js';
import { parseWebhookInput, withoutCredentials } from './webhook-input.js';
import { TargetGuard } from './target-guard.js';

export type { WebhookLog, WebhookOptions, WebhookOutcome } from './webhook-delivery-worker.js';

/** An endpoint as clients see it: never its secret (that is shown on create and rotate only). */
export type WebhookView = Omit<WebhookRecord, 'secret'>;

export interface DeliveryView extends Omit<DeliveryRecord, 'payload'> {
  attemptLog: Omit<AttemptRecord, 'deliveryId'>[];
}

/** Why an endpoint stored with credentials in its URL (as earlier versions allowed) was paused. */
const CREDENTIALS_PAUSE_REASON =
  'Paused by the server: its URL carried a user name and password, which are no longer stored, shown or sent (they were erased). ' +
  'Have the receiver check the webhook-signature header instead, then resume (or PATCH another url).';

/**
 * Webhooks: admin management of endpoints, and their delivery. Events reach webhooks through the
 * one event dispatcher: a feeder turns each event into one delivery per subscribed endpoint, in a
 * transaction with its persisted position (so restarts and crashes lose none and duplicate none);
 * a worker ({@link WebhookDeliveryWorker}) attempts due deliveries, the oldest of each endpoint
 * first, signed as Standard Webhooks says, and retries failures on the schedule.
 */
export class WebhookService {
  readonly #store: WebhookStore;
  readonly #types: ReadonlySet<string>;
  readonly #guard: TargetGuard;
  readonly #log: WebhookLog;
  readonly #feeder: WebhookFeeder;
  readonly #worker: WebhookDeliveryWorker;

  /** `onOutcome` hears of every attempt's outcome (metrics). */
  constructor(
    store: WebhookStore,
    events: EventDispatcher,
    schema: SchemaModel,
    options: WebhookOptions,
    log: WebhookLog,
    onOutcome: (outcome: WebhookOutcome) => void = () => undefined,
  ) {
    this.#store = store;
    this.#guard = new TargetGuard({ allow: options.allowHosts });
    this.#log = log;
    this.#feeder = new WebhookFeeder(store, events, log, () => this.#worker.wake());
    this.#worker = new WebhookDeliveryWorker(store, this.#feeder, this.#guard, options, log, onOutcome);
    const types = new Set<string>();
    for (const resource of schema.resources.values()) for (const kind of ['created', 'updated', 'deleted']) types.add(`${resource.singular}.${kind}`);
    this.#types = types;
  }

  // ------------------------------------------------------------------ management (admin only)

  async create(principal: Principal, body: unknown): Promise<WebhookRecord> {
    requireAdmin(principal, 'webhooks');
    const input = await parseWebhookInput(body, true, this.#types, this.#guard);
    // The position reached so far is saved first: after a crash, no earlier event reaches the new endpoint.
    await this.#feeder.flush();
    const record = await this.#store.create(
      { url: input.url ?? '', events: input.events ?? [], description: input.description ?? null, secret: newSecret() },
      new Date().toISOString(),
    );
    await this.#feeder.sync();
    return record;
  }

  async list(principal: Principal): Promise<WebhookView[]> {
    requireAdmin(principal, 'webhooks');
    return (await this.#store.list()).map(view);
  }

  async get(principal: Principal, id: number): Promise<WebhookView> {
    requireAdmin(principal, 'webhooks');
    return view(await this.#existing(id));
  }

  async update(principal: Principal, id: number, body: unknown): Promise<WebhookView> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const input = await parseWebhookInput(body, false, this.#types, this.#guard);
    await this.#feeder.flush();
    const record = await this.#changed(id, input);
    await this.#feeder.sync();
    return view(record);
  }

  async delete(principal: Principal, id: number): Promise<void> {
    requireAdmin(principal, 'webhooks');
    if (!(await this.#store.delete(id))) throw notFound(id);
    await this.#feeder.sync();
  }

  /** Stops deliveries to an endpoint (they queue up) or starts them again (also after it was disabled). */
  async setPaused(principal: Principal, id: number, paused: boolean): Promise<WebhookView> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const values = paused ? { status: 'paused' as const } : { status: 'active' as const, disabledReason: null, failingSince: null };
    await this.#feeder.flush();
    const record = await this.#changed(id, values);
    await this.#feeder.sync();
    if (!paused) this.#worker.wake();
    return view(record);
  }

  /** A new secret; the old one stops signing at once. */
  async rotateSecret(principal: Principal, id: number): Promise<WebhookRecord> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const record = await this.#changed(id, { secret: newSecret() });
    return { ...record, url: withoutCredentials(record.url) };
  }

  async deliveries(principal: Principal, id: number, limit = 100): Promise<DeliveryView[]> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    const deliveries = await this.#store.deliveries(id, limit);
    const attempts = await this.#store.attempts(deliveries.map((d) => d.id));
    return deliveries.map(({ payload: _payload, ...d }) => ({
      ...d,
      attemptLog: attempts.filter((a) => a.deliveryId === d.id).map(({ deliveryId: _deliveryId, ...a }) => a),
    }));
  }

  /** Delivers again: the delivery becomes pending and due now, whatever it was. */
  async retry(principal: Principal, id: number, deliveryId: number): Promise<void> {
    requireAdmin(principal, 'webhooks');
    await this.#existing(id);
    if ((await this.#store.delivery(id, deliveryId)) === undefined) throw new NotFoundError(`Webhook ${id} has no delivery ${deliveryId}.`);
    await this.#store.retry(deliveryId, new Date().toISOString());
    this.#worker.wake();
  }

  async #existing(id: number): Promise<WebhookRecord> {
    const record = await this.#store.get(id);
    if (record === undefined) throw notFound(id);
    return record;
  }

  async #changed(id: number, values: Parameters<WebhookStore['update']>[1]): Promise<WebhookRecord> {
    const record = await this.#store.update(id, values, new Date().toISOString());
    if (record === undefined) throw notFound(id);
    return record;
  }

  // ------------------------------------------------------------------ start and stop

  /**
   * Endpoints whose URL carries credentials (earlier versions accepted them) lose them and are
   * paused, saying why: their deliveries queue up until an admin resumes them, and the password is
   * shown, sent and stored no more.
   */
  async #pauseCredentialedEndpoints(): Promise<void> {
    for (const webhook of await this.#store.list()) {
      const url = withoutCredentials(webhook.url);
      if (url === webhook.url) continue;
      const status = webhook.status === 'disabled' ? 'disabled' : 'paused';
      await this.#store.update(webhook.id, { url, status, disabledReason: CREDENTIALS_PAUSE_REASON }, new Date().toISOString());
      this.#log.notice(`webhook ${webhook.id}: its URL carried credentials; they were erased and the endpoint is ${status}`);
    }
  }

  /** Starts feeding deliveries from the outbox (from where the last run stopped) and attempting them. */
  async start(): Promise<void> {
    await this.#pauseCredentialedEndpoints();
    await this.#worker.start();
  }

  /** Stops feeding and attempting (attempts under way finish by themselves); saves the feeder's position. */
  async stop(): Promise<void> {
    await this.#worker.stop();
  }
}

function view(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    // Never a password, even one stored by an instance of an earlier version since this one started.
    url: withoutCredentials(record.url),
    events: record.events,
    description: record.description,
    status: record.status,
    disabledReason: record.disabledReason,
    failingSince: record.failingSince,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`There is no webhook with id ${id}.`);
}
