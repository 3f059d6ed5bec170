import { hasNul, NUL_DETAIL } from '../core/storable-text.js';
import { isPlainObject } from '../core/merge-patch.js';
import { ValidationError, type ErrorDetail } from '../errors.js';
import { TargetRefusedError, type TargetGuard } from './target-guard.js';

const FIELDS = ['url', 'events', 'description'];

/** The members of a webhook request body, checked. */
export interface WebhookInput {
  url?: string;
  events?: string[];
  description?: string | null;
}

/** Whether a URL carries a user name or password (`https://user:pw@host/`). */
export function carriesCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/** A stored URL as it may be shown and used: without any user name or password. */
export function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (!carriesCredentials(parsed)) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

/**
 * Checks a webhook body (whole for create, a merge patch for update): the URL (http or https,
 * without credentials, and a target the guard allows), the event types, the description. Every problem at once (422).
 */
export async function parseWebhookInput(body: unknown, whole: boolean, types: ReadonlySet<string>, guard: TargetGuard): Promise<WebhookInput> {
  if (!isPlainObject(body)) throw new ValidationError('The body must be a JSON object.', { errors: [{ pointer: '', detail: 'must be an object' }] });
  const problems: ErrorDetail[] = [];
  const out: WebhookInput = {};
  for (const key of Object.keys(body)) if (!FIELDS.includes(key)) problems.push({ pointer: `/${key}`, detail: `is not a webhook field (they are ${FIELDS.join(', ')})` });
  if (whole || body.url !== undefined) {
    const url = body.url;
    let parsed: URL | undefined;
    if (typeof url !== 'string' || url.length > 2048) problems.push({ pointer: '/url', detail: 'must be an http or https URL of at most 2048 characters' });
    else if (hasNul(url)) problems.push({ pointer: '/url', detail: NUL_DETAIL });
    else {
      try {
        parsed = new URL(url);
      } catch {
        problems.push({ pointer: '/url', detail: 'is not a URL' });
      }
      if (parsed !== undefined && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') problems.push({ pointer: '/url', detail: 'must use http or https' });
      else if (parsed !== undefined && carriesCredentials(parsed)) {
        problems.push({
          pointer: '/url',
          detail: 'must not contain a user name or password: every admin would see it, and every delivery would send it; receivers authenticate deliveries by their webhook-signature header',
        });
      } else if (parsed !== undefined) {
        try {
          await guard.resolve(parsed);
          out.url = parsed.toString();
        } catch (error) {
          if (!(error instanceof TargetRefusedError)) throw error;
          problems.push({ pointer: '/url', detail: `is refused: ${error.message}` });
        }
      }
    }
  }
  if (whole || body.events !== undefined) {
    const events = body.events;
    if (!Array.isArray(events) || events.length === 0 || events.length > 100) problems.push({ pointer: '/events', detail: 'must be a list of 1 to 100 event types, or ["*"] for all' });
    else {
      events.forEach((type, i) => {
        if (type !== '*' && (typeof type !== 'string' || !types.has(type))) {
          problems.push({ pointer: `/events/${i}`, detail: `is not an event type (they are ${[...types].join(', ')}, or *)` });
        }
      });
      out.events = [...new Set(events as string[])];
    }
  }
  if (body.description !== undefined) {
    const description = body.description;
    if (description !== null && (typeof description !== 'string' || description.length > 500)) problems.push({ pointer: '/description', detail: 'must be text of at most 500 characters, or null' });
    else if (typeof description === 'string' && hasNul(description)) problems.push({ pointer: '/description', detail: NUL_DETAIL });
    else out.description = description;
  }
  if (problems.length > 0) throw new ValidationError(problems.length === 1 ? 'One field is invalid.' : `${problems.length} fields are invalid.`, { errors: problems });
  return out;
}
