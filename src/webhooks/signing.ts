import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new endpoint secret, as Standard Webhooks spells them: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks signature headers of one attempt: `webhook-id`, `webhook-timestamp`
 * (seconds) and `webhook-signature` = `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`, keyed
 * with the secret's base64-decoded bytes.
 */
export function signatureHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}

/** Whether a signature header carries a valid v1 signature (for our own tests and tools). */
export function verifySignature(secret: string, headers: Record<string, string>, body: string): boolean {
  const expected = signatureHeaders(secret, headers['webhook-id'] ?? '', Number(headers['webhook-timestamp']), body)['webhook-signature'] ?? '';
  return (headers['webhook-signature'] ?? '').split(' ').some((candidate) => {
    const a = Buffer.from(candidate);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  });
}
