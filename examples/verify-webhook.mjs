import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether a restgraph webhook delivery is authentic: its `webhook-signature` signs its id, its
 * timestamp and its body, exactly as received, with the endpoint's secret, and its timestamp is
 * within 5 minutes of `now` (an older delivery may be a replay).
 * The HMAC key is not the secret string itself: it is the base64-decoded part after `whsec_`.
 */
export function verifyWebhook(secret, headers, rawBody, now = Date.now()) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  if (!(Math.abs(now / 1000 - Number(timestamp)) <= 5 * 60)) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  // Several signatures, space-separated: any one that matches will do.
  return String(headers['webhook-signature'])
    .split(' ')
    .some((signature) => {
      const given = Buffer.from(signature.startsWith('v1,') ? signature.slice(3) : '', 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
