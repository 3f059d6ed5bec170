import { describe, expect, it } from 'vitest';
import { DeliveryQueue } from '../src/core/delivery-queue.js';

/** Fan-out work runs a bounded number of steps per event-loop turn, in order, off the caller's path. */

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function* steps(log: string[], name: string, count: number): Generator<void> {
  for (let i = 0; i < count; i++) {
    log.push(`${name}${i}`);
    yield;
  }
}

describe('DeliveryQueue', () => {
  it('runs nothing in the caller’s turn, then at most its steps per turn, with I/O served in between', async () => {
    const log: string[] = [];
    const queue = new DeliveryQueue(100);
    queue.add(steps(log, 'a', 250));
    expect(log).toHaveLength(0);
    await turn();
    expect(log).toHaveLength(100);
    // A timer due meanwhile runs between two slices (as a request's I/O would): the next slices
    // take 2 ms each here, longer than the timer's 1 ms.
    queue.add(
      (function* slow(): Generator<void> {
        for (let i = 0; i < 300; i++) {
          const until = performance.now() + 0.02;
          while (performance.now() < until);
          yield;
        }
      })(),
    );
    let timerRanAt = -1;
    setTimeout(() => (timerRanAt = log.length), 0);
    await queue.drained();
    expect(log).toHaveLength(250);
    expect(timerRanAt).toBeGreaterThan(0);
    expect(timerRanAt).toBeLessThan(250);
  });

  it('tasks take turns, a step each, each task’s steps in order', async () => {
    const log: string[] = [];
    const queue = new DeliveryQueue(7);
    queue.add(steps(log, 'a', 4));
    queue.add(steps(log, 'b', 2));
    queue.add(steps(log, 'c', 3));
    await queue.drained();
    expect(log).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
    expect(queue.pending).toBe(0);
  });

  it('a task that throws ends; the tasks after it go on', async () => {
    const log: string[] = [];
    const queue = new DeliveryQueue(10);
    queue.add(
      (function* failing(): Generator<void> {
        log.push('x0');
        yield;
        throw new Error('a listener failed');
      })(),
    );
    queue.add(steps(log, 'b', 2));
    await queue.drained();
    expect(log).toEqual(['x0', 'b0', 'b1']);
  });

  it('clear() drops the tasks not done and ends them (their clean-up runs)', async () => {
    const log: string[] = [];
    const queue = new DeliveryQueue(5);
    let cleanedUp = false;
    queue.add(
      (function* task(): Generator<void> {
        try {
          for (let i = 0; i < 100; i++) {
            log.push(`t${i}`);
            yield;
          }
        } finally {
          cleanedUp = true;
        }
      })(),
    );
    await turn();
    queue.clear();
    await turn();
    await turn();
    expect(log).toHaveLength(5);
    expect(cleanedUp).toBe(true);
    expect(queue.pending).toBe(0);
  });
});
