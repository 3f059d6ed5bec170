import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * The heap in use after full garbage collections: what is still referenced. Tests compare two of
 * these around some work to see what the work left behind.
 */
export function heapUsedAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
