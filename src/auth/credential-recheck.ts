/**
 * Checks a long-lived connection's credential again every `everyMs`, as a new request would be
 * checked: once it no longer authenticates (revoked, expired), `onInvalid` is called (it should
 * end the connection). Returns the function that stops the checks.
 */
export function recheckCredential(header: string, authenticate: (header: string) => Promise<unknown>, everyMs: number, onInvalid: () => void): () => void {
  const timer = setInterval(() => {
    authenticate(header).catch(onInvalid);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
