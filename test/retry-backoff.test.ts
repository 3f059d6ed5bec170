import { describe, expect, it } from 'vitest';
import { RetryBackoff } from '../src/retry-backoff.js';

/** The backoff of the background workers: bounded, jittered, reset by a success, and quiet in the log. */
describe('RetryBackoff', () => {
  const logged = (): { lines: string[]; log: { failing: (e: unknown, m: string) => void; recovered: (m: string) => void } } => {
    const lines: string[] = [];
    return { lines, log: { failing: (_error, message) => lines.push(`failing: ${message}`), recovered: (message) => lines.push(`recovered: ${message}`) } };
  };

  it('doubles from initialMs up to maxMs, each delay drawn from the upper half of its ceiling; a success starts again from initialMs', () => {
    const { log } = logged();
    const backoff = new RetryBackoff('work', log, { initialMs: 100, maxMs: 1000 });
    const ceilings = [100, 200, 400, 800, 1000, 1000, 1000];
    for (const ceiling of ceilings) {
      const delay = backoff.failed(new Error('down'), 0);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
      expect(backoff.waiting(delay - 1)).toBe(true);
      expect(backoff.waiting(delay)).toBe(false);
    }
    backoff.succeeded(10);
    expect(backoff.failing).toBe(false);
    expect(backoff.failed(new Error('down again'), 20)).toBeLessThanOrEqual(100);
  });

  it('reports the first failure of a run, then at most one a minute, and the recovery with how long it lasted', () => {
    const { lines, log } = logged();
    const backoff = new RetryBackoff('reading the outbox', log);
    backoff.failed(new Error('down'), 0);
    for (let t = 1000; t < 60_000; t += 1000) backoff.failed(new Error('down'), t);
    backoff.failed(new Error('down'), 60_000);
    backoff.succeeded(61_500);
    backoff.succeeded(62_000);
    expect(lines).toEqual([
      'failing: reading the outbox failed; retrying with backoff',
      'failing: reading the outbox failed (failing for 60 s); retrying with backoff',
      'recovered: reading the outbox works again after failing for 61500 ms',
    ]);
  });
});
