import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { DeliveryRecord, WebhookRecord } from '../store/webhook-store.js';
import { signatureHeaders } from './signing.js';
import { withoutCredentials } from './webhook-input.js';
import type { TargetGuard } from './target-guard.js';

export interface SendOutcome {
  status?: number;
  error?: string;
  retryAfterMs?: number;
}

/** Makes one delivery attempt over HTTP(S): signed, to the checked address, bounded in time and size. */
export class WebhookSender {
  readonly #guard: TargetGuard;
  readonly #options: { timeoutMs: number; maxResponseBytes: number };

  constructor(guard: TargetGuard, options: { timeoutMs: number; maxResponseBytes: number }) {
    this.#guard = guard;
    this.#options = options;
  }

  /** One POST, to the checked address, no redirects, the response read up to a small limit. */
  async send(webhook: WebhookRecord, delivery: DeliveryRecord): Promise<SendOutcome> {
    let url: URL;
    let target: { address: string; family: 4 | 6 };
    try {
      // Never with credentials (Node would send them as Basic auth), whatever is stored.
      url = new URL(withoutCredentials(webhook.url));
      // Checked again at every attempt: the name may resolve elsewhere now (DNS rebinding).
      target = await this.#guard.resolve(url);
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'restgraph-webhooks',
      ...signatureHeaders(webhook.secret, `msg_${delivery.id}`, timestamp, delivery.payload),
    };
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (typeof options === 'object' && options.all === true) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    let timedOut = false;
    let answered = false;
    return new Promise((resolve) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, { method: 'POST', headers, lookup, timeout: this.#options.timeoutMs }, (res: IncomingMessage) => {
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > this.#options.maxResponseBytes) res.destroy();
        });
        const done = (): void => {
          answered = true;
          if (timedOut) {
            resolve({ error: `no complete response within ${this.#options.timeoutMs} ms` });
            return;
          }
          const status = res.statusCode ?? 0;
          const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after']) : undefined;
          resolve({ status, ...(status >= 300 && status < 400 ? { error: `redirect to ${res.headers.location ?? '?'} not followed` } : {}), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      // One limit on the whole attempt (a receiver trickling its answer is cut off too). Judged
      // once what has arrived is read: after a stall of this process (a long GC, a slow fsync, a
      // loaded machine), the timer runs before the I/O that came meanwhile, and an answer that
      // arrived in time would be taken for a timeout and sent again. The I/O phase runs between
      // this timer and the immediate.
      const timer = setTimeout(() => {
        setImmediate(() => {
          if (answered) return;
          timedOut = true;
          req.destroy(new Error(`no complete response within ${this.#options.timeoutMs} ms`));
        });
      }, this.#options.timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('error', (error) => resolve({ error: error.message }));
      req.end(delivery.payload);
    });
  }
}

/** Retry-After in seconds or as an HTTP date, capped at a day; undefined when absent or unreadable. */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 24 * 60 * 60 * 1000) : undefined;
}
