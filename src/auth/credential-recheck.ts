import { TransientStoreError } from '../store/store-errors.js';

/**
 * Checks a long-lived connection's credential again every `everyMs`, as a new request would be
 * checked: once it no longer authenticates (revoked, expired), `onInvalid` is called (it should
 * end the connection). A check the database cannot answer just now (out of reach) proves nothing:
 * the connection stays, and the next check decides. Returns the function that stops the checks.
 */
export function recheckCredential(header: string, authenticate: (header: string) => Promise<unknown>, everyMs: number, onInvalid: () => void): () => void {
  const timer = setInterval(() => {
    authenticate(header).catch((error: unknown) => {
      if (!isPassingTrouble(error)) onInvalid();
    });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Whether an authentication failed because the database could not answer, not because the credential is bad. */
export function isPassingTrouble(error: unknown): boolean {
  return error instanceof TransientStoreError;
}
