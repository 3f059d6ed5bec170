/**
 * Runs Node's `process.nextTick` queue hot before start-up allocates, so V8 optimises it while its
 * inline caches still describe one object shape.
 *
 * Why: every HTTP response passes through about nine `nextTick` calls in Node's own streams, and
 * each builds a tick object `{ [async_id_symbol], [trigger_async_id_symbol], callback, args }`.
 * V8 remembers the shape seen at each computed key, holding that shape weakly. A full garbage
 * collection while no tick object is alive (start-up builds the schema, validators and GraphQL
 * types, then the server sits idle) frees the shapes; the next tick object makes new ones, and V8
 * then marks those keys megamorphic for good. From then on every tick object is built in V8's
 * runtime, on every request (docs/performance.md has the measured cost;
 * `%DebugPrint(process.nextTick)` shows the slots MEGAMORPHIC). Once the queue's
 * code is optimised with one shape, later collections leave it alone.
 *
 * @see https://v8.dev/blog/fast-properties (hidden classes and their transitions)
 */
export function warmTickQueue(): Promise<void> {
  warmed ??= new Promise((resolve) => {
    let left = TICKS;
    const step = (): void => {
      if (--left > 0) process.nextTick(step);
      else resolve();
    };
    process.nextTick(step);
  });
  return warmed;
}

/** Enough for V8 to optimise the queue (2,000 measured to suffice); a few milliseconds, once per process. */
const TICKS = 5_000;

let warmed: Promise<void> | undefined;
