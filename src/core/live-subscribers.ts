import type { EventSubscriber } from './event-subscriber.js';
import type { RecordId } from '../schema/record-key.js';

const ALL_TYPES = '*';

/** The live subscribers of one event type (or of every type): of every record, and by record id. */
interface TypeIndex<E> {
  any: Set<E>;
  byRecord: Map<RecordId, Set<E>>;
}

/**
 * The dispatcher's live subscribers, indexed by the event types they take (`*`: every type) and by
 * record when they name one: an event costs only the subscribers that want it.
 */
export class LiveSubscribers<E extends { readonly subscriber: EventSubscriber }> {
  readonly #byType = new Map<string, TypeIndex<E>>();

  /** Whether no subscriber is live. */
  get empty(): boolean {
    return this.#byType.size === 0;
  }

  add(entry: E): void {
    const { recordId } = entry.subscriber;
    for (const type of entry.subscriber.types ?? [ALL_TYPES]) {
      let index = this.#byType.get(type);
      if (index === undefined) this.#byType.set(type, (index = { any: new Set(), byRecord: new Map() }));
      if (recordId === undefined) {
        index.any.add(entry);
        continue;
      }
      let set = index.byRecord.get(recordId);
      if (set === undefined) index.byRecord.set(recordId, (set = new Set()));
      set.add(entry);
    }
  }

  delete(entry: E): void {
    const { recordId } = entry.subscriber;
    for (const type of entry.subscriber.types ?? [ALL_TYPES]) {
      const index = this.#byType.get(type);
      if (index === undefined) continue;
      if (recordId === undefined) index.any.delete(entry);
      else {
        const set = index.byRecord.get(recordId);
        set?.delete(entry);
        if (set?.size === 0) index.byRecord.delete(recordId);
      }
      if (index.any.size === 0 && index.byRecord.size === 0) this.#byType.delete(type);
    }
  }

  /**
   * The subscribers an event of `type` about record `recordId` goes to: those of its type, then
   * those of every type; of each, those of every record, then those of this one. (Subscribers may
   * leave while this is walked: a set's iteration skips those deleted.)
   */
  *of(type: string, recordId: RecordId): Generator<E> {
    for (const key of [type, ALL_TYPES]) {
      const index = this.#byType.get(key);
      if (index === undefined) continue;
      yield* index.any;
      const ofRecord = index.byRecord.get(recordId);
      if (ofRecord !== undefined) yield* ofRecord;
    }
  }

  /** Every live subscriber, once. */
  all(): Set<E> {
    const all = new Set<E>();
    for (const index of this.#byType.values()) {
      for (const entry of index.any) all.add(entry);
      for (const set of index.byRecord.values()) for (const entry of set) all.add(entry);
    }
    return all;
  }
}
