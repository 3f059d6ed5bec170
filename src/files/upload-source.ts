import type { Readable, Writable } from 'node:stream';

/**
 * Ends `target` when `source` fails or closes before its end (a client that went away mid-body,
 * a request timed out): `pipe()` forwards neither, so the stream fed from it would wait for an
 * end that never comes, holding its temporary file and handle. @returns removes the listeners
 */
export function endWithSource(source: Readable, target: Writable): () => void {
  const onGone = (error?: Error): void => {
    if (!source.readableEnded && !target.destroyed) target.destroy(error instanceof Error ? error : new Error('The request ended before its body did.'));
  };
  const onAborted = (): void => onGone();
  source.once('error', onGone).once('close', onAborted).once('aborted', onAborted);
  return () => {
    source.off('error', onGone).off('close', onAborted).off('aborted', onAborted);
  };
}
