import type { DeliveryRecord, WebhookStore } from '../store/webhook-store.js';
import type { WebhookFeeder } from './webhook-feeder.js';
import { WebhookSender } from './webhook-sender.js';
import type { TargetGuard } from './target-guard.js';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RetryBackoff, type WorkerLog } from '../retry-backoff.js';
import { TransientStoreError } from '../store/store-errors.js';

/** Where webhooks report: background work failing (retried with backoff) and working again, and notices. */
export interface WebhookLog extends WorkerLog {
  /** Something an operator should know (an endpoint disabled). */
  notice(message: string): void;
}

export interface WebhookOptions {
  /** Delays before each retry after the first attempt, in seconds (jittered ±20 %). */
  retryScheduleSeconds: readonly number[];
  /** How long one attempt may take. @default 10_000 */
  timeoutMs: number;
  /**
   * How long a claimed delivery stays leased past `timeoutMs`: time to record the attempt's outcome
   * (and to retry that while the database is away), and room for clocks of instances that differ a
   * little. A delivery whose attempt was cut short (a crash) is attempted again once the lease
   * ends: timeoutMs + leaseMarginMs after it was claimed. @default 5000
   */
  leaseMarginMs: number;
  /** An endpoint failing continuously for this long is disabled. @default 5 days */
  disableAfterMs: number;
  /** Hosts and CIDR ranges webhooks may target although private (tests, internal receivers). */
  allowHosts: readonly string[];
  /** Bytes of a receiver's response body kept in the delivery log. @default 1024 */
  maxResponseBytes: number;
  /** How often due deliveries are looked for. @default 500 */
  pollIntervalMs: number;
}

/**
 * What came of one attempt: delivered, failed with a retry scheduled, or failed for good (no retry
 * left); `endpoint-disabled` is reported besides, when a failure disables its endpoint.
 */
export type WebhookOutcome = 'succeeded' | 'retry-scheduled' | 'failed' | 'endpoint-disabled';

/** Attempts in flight at once (each to a different endpoint). */
const MAX_IN_FLIGHT = 20;

/** Failed claims remembered (the latest), whose leases the next claims take back. */
const MAX_UNCONFIRMED_LEASES = 16;

/**
 * The delivery worker: claims due deliveries under a lease, up to 20 at a time, the oldest of each
 * endpoint first; makes each attempt, signed as Standard Webhooks says ({@link WebhookSender});
 * records its outcome, retries failures on the schedule and disables an endpoint that fails for
 * too long. It also keeps the feeder going: it saves the feeder's position on its timer and has it
 * look for endpoints registered through another instance.
 */
export class WebhookDeliveryWorker {
  readonly #store: WebhookStore;
  readonly #options: WebhookOptions;
  readonly #sender: WebhookSender;
  readonly #log: WebhookLog;
  /** Claiming due deliveries, and recording attempts, failed: none are claimed until the delay has passed. */
  readonly #claims: RetryBackoff;
  /** Saving the feeder's position, or looking for endpoints, failed: not tried again until the delay has passed. */
  readonly #upkeep: RetryBackoff;
  readonly #feeder: WebhookFeeder;
  readonly #onOutcome: (outcome: WebhookOutcome) => void;
  #timer: NodeJS.Timeout | undefined;
  #claiming = false;
  #wakeAgain = false;
  #inFlight = 0;
  /**
   * The deliveries whose attempt is under way here. A claim may return one of them: after a stall
   * of this process longer than the lease margin, its lease has ended before its outcome is
   * recorded. It is not attempted a second time meanwhile (its endpoint would get it twice, and
   * two at once); the attempt under way records its outcome.
   */
  readonly #attempting = new Set<number>();
  /** Leases of claims that failed, which may have committed nonetheless; the next claims take their deliveries back. */
  readonly #unconfirmedLeases: string[] = [];
  #stopped = false;

  /** `onOutcome` hears of every attempt's outcome (metrics). */
  constructor(store: WebhookStore, feeder: WebhookFeeder, guard: TargetGuard, options: WebhookOptions, log: WebhookLog, onOutcome: (outcome: WebhookOutcome) => void) {
    this.#store = store;
    this.#onOutcome = onOutcome;
    this.#options = options;
    this.#sender = new WebhookSender(guard, options);
    this.#log = log;
    this.#claims = new RetryBackoff('claiming and recording webhook deliveries', log);
    this.#upkeep = new RetryBackoff('saving the webhook feeder position or looking for endpoints', log);
    this.#feeder = feeder;
  }

  /** Starts the feeder (from where the last run stopped) and attempting deliveries. */
  async start(): Promise<void> {
    await this.#feeder.sync();
    this.#timer = setInterval(() => {
      this.wake();
      if (!this.#upkeep.waiting()) void this.#upkeepNow();
    }, this.#options.pollIntervalMs);
    this.#timer.unref();
    this.wake();
  }

  /** Saves the feeder's position; looks for endpoints registered through another instance (then this one feeds and attempts too). Never rejects. */
  async #upkeepNow(): Promise<void> {
    try {
      await this.#feeder.flush();
      if (!this.#feeder.running) await this.#feeder.sync();
      this.#upkeep.succeeded();
    } catch (error) {
      this.#upkeep.failed(error);
    }
  }

  /** Stops feeding and attempting (attempts under way finish by themselves); saves the feeder's position. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#feeder.stop();
  }

  /**
   * Starts attempts for the deliveries that are due, up to 20 at a time, each endpoint's oldest
   * first; each finished attempt looks again. A slow endpoint holds up only its own deliveries.
   */
  wake(): void {
    // Without an active or paused endpoint there is nothing to attempt; after a failure to claim,
    // the next wake-up after the delay claims again.
    if (this.#stopped || !this.#feeder.running || this.#claims.waiting()) return;
    if (this.#claiming) {
      this.#wakeAgain = true;
      return;
    }
    this.#claiming = true;
    void (async () => {
      while (this.#inFlight < MAX_IN_FLIGHT && !this.#stopped) {
        const { now, lease, leaseEnds } = this.#newLease();
        const limit = MAX_IN_FLIGHT - this.#inFlight;
        const unconfirmed = this.#unconfirmedLeases.slice();
        let due: DeliveryRecord[];
        try {
          due = await this.#store.claimDue(now, lease, limit, unconfirmed);
        } catch (error) {
          // It may have committed all the same (the connection lost during COMMIT): the next claim names it.
          this.#leaseUnconfirmed(lease);
          throw error;
        }
        this.#claims.succeeded();
        // Below the limit, whatever those leases held and is still due has just been claimed again.
        if (due.length < limit) this.#unconfirmedLeases.splice(0, unconfirmed.length);
        if (due.length === 0) break;
        let given = false;
        for (const delivery of due) {
          if (this.#attempting.has(delivery.id)) {
            given = true;
            // Its attempt under way here records the outcome, or has recorded it and is finishing
            // (marking its endpoint failing): the retry of a failed attempt can be due by then.
            // This claim's lease would hold it back until the lease ends (the attempt timeout and
            // the lease margin, 15 s by default): given back, a claim after that attempt takes it.
            void this.#store.releaseLease(delivery.id, lease).catch((error: unknown) => this.#claims.failed(error));
            continue;
          }
          this.#inFlight++;
          // An attempt whose outcome could not be recorded is attempted again once its lease ends.
          void this.#attempt(delivery, leaseEnds)
            .catch((error: unknown) => this.#claims.failed(error))
            .finally(() => {
              this.#inFlight--;
              this.wake();
            });
        }
        // Claimed again now, what was given back would be given back again, and again, until
        // that attempt ends: it wakes the claims when it does.
        if (given) break;
      }
    })()
      .catch((error: unknown) => this.#claims.failed(error))
      .finally(() => {
        this.#claiming = false;
        if (this.#wakeAgain) {
          this.#wakeAgain = false;
          this.wake();
        }
      });
  }

  /** A lease for a claim made now: it ends the attempt timeout and the lease margin from now. */
  #newLease(): { now: string; lease: string; leaseEnds: number } {
    const now = Date.now();
    const leaseEnds = now + this.#options.timeoutMs + this.#options.leaseMarginMs;
    return { now: new Date(now).toISOString(), lease: `${new Date(leaseEnds).toISOString()} ${randomBytes(6).toString('hex')}`, leaseEnds };
  }

  /** A claim that may have committed though its answer was lost: the next claim takes back what it holds. */
  #leaseUnconfirmed(lease: string): void {
    this.#unconfirmedLeases.push(lease);
    if (this.#unconfirmedLeases.length > MAX_UNCONFIRMED_LEASES) this.#unconfirmedLeases.shift();
  }

  /**
   * Runs a step of an attempt on the database (reading its endpoint before sending, recording the
   * outcome after), trying again while the database cannot take it, for as long as the delivery is
   * leased to this process: the endpoint's next deliveries then go out as soon as the database is
   * back, not when the lease ends. Past the lease, or at shutdown, it gives up and the delivery is
   * attempted again, as after a crash (at least once).
   */
  async #whileLeased<T>(step: () => Promise<T>, leaseEnds: number): Promise<T> {
    for (let pause = RETRY_WHILE_LEASED_MS.first; ; pause = Math.min(pause * 2, RETRY_WHILE_LEASED_MS.max)) {
      try {
        return await step();
      } catch (error) {
        if (!(error instanceof TransientStoreError) || this.#stopped || Date.now() + pause >= leaseEnds) throw error;
        await sleep(pause);
      }
    }
  }

  /**
   * Attempts a delivery; after a success, the endpoint's next delivery when it was claimed with the
   * outcome (see #attemptOne), and so on: an endpoint's queue drains without a claim of its own per
   * delivery.
   */
  async #attempt(delivery: DeliveryRecord, leaseEnds: number): Promise<void> {
    let current: { delivery: DeliveryRecord; leaseEnds: number } | undefined = { delivery, leaseEnds };
    while (current !== undefined && !this.#attempting.has(current.delivery.id)) {
      const { id } = current.delivery;
      this.#attempting.add(id);
      try {
        current = await this.#attemptOne(current.delivery, current.leaseEnds);
      } finally {
        this.#attempting.delete(id);
      }
    }
  }

  /**
   * One attempt, and its outcome recorded. After a success (and unless stopping), the endpoint's
   * next delivery is claimed in the transaction that records it, when it is due and not leased:
   * resolves to it, to be attempted next.
   */
  async #attemptOne(delivery: DeliveryRecord, leaseEnds: number): Promise<{ delivery: DeliveryRecord; lease: string; leaseEnds: number } | undefined> {
    const webhook = await this.#whileLeased(() => this.#store.get(delivery.webhookId), leaseEnds);
    if (webhook === undefined) return undefined;
    const started = Date.now();
    const outcome = await this.#sender.send(webhook, delivery);
    const finished = Date.now();
    const attempt = {
      attemptedAt: new Date(started).toISOString(),
      durationMs: finished - started,
      responseStatus: outcome.status ?? null,
      error: outcome.error ?? null,
    };
    const ok = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    const attempts = delivery.attempts + 1;
    const schedule = this.#options.retryScheduleSeconds;
    let next: { status: 'pending' | 'succeeded' | 'failed'; nextAttemptAt: string };
    if (ok) next = { status: 'succeeded', nextAttemptAt: attempt.attemptedAt };
    else if (attempts > schedule.length) next = { status: 'failed', nextAttemptAt: attempt.attemptedAt };
    else {
      const jittered = (schedule[attempts - 1] ?? 0) * 1000 * (0.8 + Math.random() * 0.4);
      const delayMs = outcome.retryAfterMs ?? jittered;
      next = { status: 'pending', nextAttemptAt: new Date(finished + delayMs).toISOString() };
    }
    // Each try of the record step claims with a lease of its own, made when it runs; a try may
    // have committed though its answer was lost, so the next try, and after the last the next
    // claim, take back what the earlier ones leased.
    const leases: string[] = [];
    let claimed: { delivery: DeliveryRecord; lease: string; leaseEnds: number } | undefined;
    try {
      claimed = await this.#whileLeased(async () => {
        const claim = ok && !this.#stopped ? this.#newLease() : undefined;
        if (claim === undefined) {
          await this.#store.recordAttempt(delivery, attempt, next);
          return undefined;
        }
        const unconfirmed = leases.slice();
        leases.push(claim.lease);
        const nextDelivery = await this.#store.recordAttempt(delivery, attempt, next, { now: claim.now, leaseUntil: claim.lease, unconfirmed });
        return nextDelivery === undefined ? undefined : { delivery: nextDelivery, lease: claim.lease, leaseEnds: claim.leaseEnds };
      }, leaseEnds);
    } catch (error) {
      for (const lease of leases) this.#leaseUnconfirmed(lease);
      throw error;
    }
    this.#onOutcome(ok ? 'succeeded' : next.status === 'failed' ? 'failed' : 'retry-scheduled');
    try {
      if (ok) {
        if (webhook.failingSince !== null) await this.#store.update(webhook.id, { failingSince: null }, new Date().toISOString());
      } else if (webhook.failingSince === null) {
        await this.#store.update(webhook.id, { failingSince: attempt.attemptedAt }, new Date().toISOString());
      } else if (finished - Date.parse(webhook.failingSince) >= this.#options.disableAfterMs) {
        const reason = `Disabled at ${new Date(finished).toISOString()}: every delivery failed since ${webhook.failingSince} (last: ${outcome.error ?? `HTTP ${outcome.status ?? '?'}`}).`;
        await this.#store.update(webhook.id, { status: 'disabled', disabledReason: reason }, new Date().toISOString());
        this.#onOutcome('endpoint-disabled');
        this.#log.notice(`webhook ${webhook.id} disabled: ${reason}`);
      }
    } catch (error) {
      // The next delivery claimed will not be attempted now: the next claim takes it back.
      if (claimed !== undefined) this.#leaseUnconfirmed(claimed.lease);
      throw error;
    }
    return claimed;
  }
}

/** Pauses between tries to record an attempt's outcome while the database cannot take it (ms). */
const RETRY_WHILE_LEASED_MS = { first: 100, max: 2000 };
