import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli-serve.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createWebhook, signed, WebhookReceiver, type ReceivedRequest } from './helpers/webhook-receiver.js';

/**
 * docs/events.md's verification of a webhook delivery: the page says what the HMAC key is (the
 * base64-decoded part of the secret after `whsec_`) and shows examples/verify-webhook.mjs as it is,
 * which examples/webhook-receiver.mjs uses; that function accepts a delivery restgraph sent (as
 * the standardwebhooks library does, from the same secret) and refuses it changed in any part.
 */

type VerifyWebhook = (secret: string, headers: Record<string, string>, rawBody: string | Buffer, now?: number) => boolean;

const EXAMPLE = join(ROOT, 'examples', 'verify-webhook.mjs');
const page = readFileSync(join(ROOT, 'docs', 'events.md'), 'utf8');

let t: TestApp;
let receiver: WebhookReceiver;
let delivery: ReceivedRequest;
let secret: string;
let verifyWebhook: VerifyWebhook;

beforeAll(async () => {
  ({ verifyWebhook } = (await import(pathToFileURL(EXAMPLE).href)) as { verifyWebhook: VerifyWebhook });
  receiver = await WebhookReceiver.start();
  t = await startTestApp({ webhooks: { allowHosts: ['127.0.0.1'], retryScheduleSeconds: [0.1], pollIntervalMs: 50 } });
  ({ secret } = await createWebhook(t.app, { url: receiver.url('/hooks'), events: ['user.created'] }));
  receiver.verifyWith('/hooks', secret);
  const created = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Ada' } });
  expect(created.statusCode).toBe(201);
  await receiver.waitFor((r) => r.to('/hooks').length >= 1, 'the delivery');
  [delivery] = receiver.to('/hooks') as [ReceivedRequest];
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

describe("docs/events.md's verification of a delivery", () => {
  it('says the key is the base64-decoded part of the secret after whsec_, and shows examples/verify-webhook.mjs as it is', () => {
    const start = page.indexOf('### Verifying a delivery');
    expect(start, 'docs/events.md has a section "Verifying a delivery"').toBeGreaterThan(0);
    const section = page.slice(start);
    expect(section).toMatch(/the part after `whsec_`, base64-decoded/);
    const shown = /```js\n([^]*?)```/.exec(section)?.[1];
    expect(shown).toBe(readFileSync(EXAMPLE, 'utf8'));
  });

  it("accepts a delivery restgraph sent, as the standardwebhooks library does with the same secret", () => {
    expect(signed(delivery).type).toBe('user.created');
    expect(verifyWebhook(secret, delivery.headers, delivery.body)).toBe(true);
    expect(verifyWebhook(secret, delivery.headers, Buffer.from(delivery.body))).toBe(true);
  });

  it('refuses it with its body, id or timestamp changed, another secret, the secret string as the key, or 10 minutes late', () => {
    const headers = delivery.headers;
    const timestamp = Number(headers['webhook-timestamp']);
    const keyedWithTheString = `v1,${createHmac('sha256', secret).update(`${headers['webhook-id'] ?? ''}.${String(timestamp)}.${delivery.body}`).digest('base64')}`;
    expect(verifyWebhook(secret, headers, delivery.body.replace('Ada', 'Eve'))).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_999' }, delivery.body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(timestamp + 1) }, delivery.body)).toBe(false);
    expect(verifyWebhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, headers, delivery.body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-signature': keyedWithTheString }, delivery.body)).toBe(false);
    expect(verifyWebhook(secret, headers, delivery.body, (timestamp + 10 * 60) * 1000)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-timestamp': 'soon' }, delivery.body)).toBe(false);
  });
});
