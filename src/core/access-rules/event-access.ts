import type { ResourceModel } from '../../schema/schema-model.js';
import type { StoredEvent } from '../../store/event-store.js';
import type { StoredRecord } from '../../store/list-spec.js';
import { canRead } from '../access-policy.js';
import { rowVisibility } from '../filter-access.js';
import { isAdmin, type Principal } from '../principal.js';
import { fieldReadOutcomes, withoutHiddenFields } from './field-access.js';

/**
 * The access rules applied to events (docs/auth.md#events), for every consumer of the event
 * dispatcher (GraphQL subscriptions, `/v1/events`) but webhooks, which are configured by admins and
 * get every event whole.
 */

/**
 * `event` as `principal` may see it, or undefined when it may not see it at all:
 * - it must read the resource, and the record under the owner and read rules: the row as it is now
 *   for a create or an update, the row as it was for a delete (a delete's event carries that row);
 * - an update's `previous` (the earlier values of the fields that changed) is left out when the
 *   principal could not read the row before the update (it then sees the row as if it had just
 *   appeared), and otherwise holds only the fields it may read on both versions (a field's being
 *   there says it changed);
 * - the fields it may not read on the row are left out of `object`.
 * The same event object comes back when nothing is hidden (so its encoding can be shared).
 */
export function eventSeenBy(principal: Principal, resource: ResourceModel, event: StoredEvent): StoredEvent | undefined {
  if (isAdmin(principal)) return event;
  if (!canRead(principal, resource)) return undefined;
  const visible = rowVisibility(principal, resource);
  const { object, previous } = event.data;
  if (visible !== undefined && !visible(object)) return undefined;
  const outcomes = fieldReadOutcomes(principal, resource);
  if (outcomes.size === 0 && (previous === undefined || visible === undefined)) return event;
  const shown = withoutHiddenFields(principal, resource, object, outcomes);
  let shownPrevious: StoredRecord | undefined = previous;
  if (previous !== undefined) {
    const before = { ...object, ...previous };
    if (visible !== undefined && !visible(before)) shownPrevious = undefined;
    else if (outcomes.size > 0) {
      const shownBefore = withoutHiddenFields(principal, resource, before, outcomes);
      if (shown !== object || shownBefore !== before) shownPrevious = Object.fromEntries(Object.entries(previous).filter(([name]) => name in shown && name in shownBefore));
    }
  }
  if (shown === object && shownPrevious === previous) return event;
  return { ...event, data: shownPrevious === undefined ? { object: shown } : { object: shown, previous: shownPrevious } };
}
