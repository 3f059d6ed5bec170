import type { Principal } from '../core/principal.js';
import { TransientStoreError } from '../store/store-errors.js';

/** What checks the credentials of open streams again (the Authenticator). */
export interface CredentialChecker {
  /** Of these Authorization headers, those that no longer authenticate, asking the database rather than a cache. */
  refuted(headers: readonly string[]): Promise<ReadonlySet<string>>;
}

/**
 * Watches a long-lived stream's credential: `end` is called once it no longer authenticates.
 * Returns the function that stops watching (call it when the stream ends on its own).
 */
export type WatchCredential = (header: string, principal: Principal, end: () => void) => () => void;

interface Watched {
  credentialId: string;
  ends: Set<() => void>;
}

/**
 * The credentials of the open streams (GraphQL over WebSocket and SSE, /v1/events), so that a
 * revoked key's streams end within a known time, wherever it was revoked:
 *
 * - through this server's API, at once ({@link endCredential});
 * - anywhere else (another instance, `restgraph token revoke`), at the next check: every
 *   `everyMs` the distinct credentials of all open streams are checked again against the
 *   database, in one statement for the API keys (not the key cache, whose entries may be
 *   `apiKeyCacheMs` old), and the streams of those that no longer authenticate are ended.
 *
 * A check the database cannot answer just now proves nothing: the streams stay, and the next
 * check decides. A check still running when the next is due is not doubled.
 */
export class StreamCredentials {
  readonly #checker: CredentialChecker;
  readonly #onError: (error: unknown) => void;
  readonly #watched = new Map<string, Watched>();
  readonly #timer: NodeJS.Timeout;
  #checking = false;

  constructor(checker: CredentialChecker, everyMs: number, onError: (error: unknown) => void) {
    this.#checker = checker;
    this.#onError = onError;
    this.#timer = setInterval(() => this.#check(), everyMs);
    this.#timer.unref();
  }

  /** Streams open now, by credential (for tests). */
  get credentials(): number {
    return this.#watched.size;
  }

  /** See {@link WatchCredential}. */
  watch(header: string, principal: Principal, end: () => void): () => void {
    let watched = this.#watched.get(header);
    if (watched === undefined) this.#watched.set(header, (watched = { credentialId: principal.credentialId, ends: new Set() }));
    const ends = watched.ends;
    // Its own function: one stream ended twice (or two streams with the same `end`) are told apart.
    const entry = (): void => end();
    ends.add(entry);
    return () => {
      ends.delete(entry);
      if (ends.size === 0 && this.#watched.get(header)?.ends === ends) this.#watched.delete(header);
    };
  }

  /** Ends at once every stream of a credential that was just revoked here (`key:<id>` for an API key). */
  endCredential(credentialId: string): void {
    for (const [header, watched] of [...this.#watched]) if (watched.credentialId === credentialId) this.#end(header);
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #check(): void {
    if (this.#checking || this.#watched.size === 0) return;
    this.#checking = true;
    this.#checker
      .refuted([...this.#watched.keys()])
      .then((refuted) => {
        for (const header of refuted) this.#end(header);
      })
      .catch(this.#onError)
      .finally(() => {
        this.#checking = false;
      });
  }

  #end(header: string): void {
    const watched = this.#watched.get(header);
    if (watched === undefined) return;
    this.#watched.delete(header);
    for (const end of [...watched.ends]) end();
  }
}

/** Whether an authentication failed because the database could not answer, not because the credential is bad. */
export function isPassingTrouble(error: unknown): boolean {
  return error instanceof TransientStoreError;
}
