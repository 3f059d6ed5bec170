/**
 * Waits for the next window of `seconds` when the current one ends within `margin` ms (windows are
 * aligned to the clock), so a burst falls in one window. A burst takes a few milliseconds (under
 * load, some hundreds): 2 s is ample for a minute's window, and waiting up to 5 s, about once in
 * every four runs of test/rate-limits.test.ts, made it slow.
 */
export async function startOfWindow(seconds: number, margin = seconds > 10 ? 2000 : seconds * 750): Promise<void> {
  const ms = seconds * 1000;
  const left = ms - (Date.now() % ms);
  if (left < margin) await new Promise((resolve) => setTimeout(resolve, left + 5));
}
