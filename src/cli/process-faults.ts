import { writeSync } from 'node:fs';

/** How the process logs a fault: one line, written out before the call returns. */
export type LogNow = (level: 'error' | 'fatal', details: Record<string, unknown>, message: string) => void;

/**
 * What `restgraph serve` does with a failure nothing caught (Node.js's default would be to exit 1
 * on either, and the batched log could lose the line saying why):
 *
 * - an **unhandled promise rejection** is logged (`error`, "unhandled promise rejection") and the
 *   server goes on: a promise nobody awaited failed, so the work it stood for is lost, but no
 *   stack was unwound half-way through a change of the process's state. (restgraph has none by
 *   design; one is a defect to report.)
 * - an **uncaught exception** is logged (`fatal`, "uncaught exception") and the server shuts down
 *   as on SIGTERM, draining the requests in flight for at most the drain timeout, then exits 1: the
 *   throw may have left some state half-changed, and a process manager restarts a clean one.
 *
 * Lines are written synchronously, after every line buffered before them. Returns the function
 * that removes the handlers.
 */
export function handleProcessFaults(log: () => LogNow, shutDown: (reason: string, exitCode: number) => void): () => void {
  const onRejection = (reason: unknown): void => {
    log()('error', { err: reason }, 'unhandled promise rejection (the process goes on)');
  };
  const onException = (error: Error, origin: string): void => {
    log()('fatal', { err: error, origin }, 'uncaught exception: draining, then exiting 1');
    shutDown('uncaughtException', 1);
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}

/** Before the app's log exists (start-up): one JSON line on standard error, written at once. */
export const logToStderr: LogNow = (level, details, message) => {
  const err = details.err;
  const described = err instanceof Error ? { message: err.message, stack: err.stack } : err;
  writeSync(2, `${JSON.stringify({ level: level === 'fatal' ? 60 : 50, time: new Date().toISOString(), ...details, err: described, msg: message })}\n`);
};
