/**
 * The updatedAt of a row's next version: now, or a millisecond after the latest of `previous`
 * when the clock has not moved on (or went back). Every write moves a row's updatedAt strictly
 * forward, so (row, updatedAt) names one version of it.
 */
export function laterThan(...previous: unknown[]): string {
  let latest = Number.NEGATIVE_INFINITY;
  for (const value of previous) {
    const time = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    if (time > latest) latest = time;
  }
  const now = Date.now();
  return new Date(now > latest ? now : latest + 1).toISOString();
}
