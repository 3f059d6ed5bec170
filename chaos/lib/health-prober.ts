import { exchange, keepAliveAgent } from './http-exchange.js';

/** The longest a health probe may wait: far above a loaded machine's noise, far below a stalled loop. */
export const MAX_PROBE_MS = 1_000;

/** What the probes of `/healthz` found. */
export interface HealthProbes {
  /** Probes answered or failed. */
  count: number;
  /** The longest a probe waited for its answer (ms): a stalled event loop shows here. */
  slowestMs: number;
  /** Probes that got no answer or one other than 200, described (the first 10). */
  failures: string[];
}

/**
 * Asks `base`'s /healthz every 20 ms on a connection of its own until stopped, timing each
 * answer. While anything runs on the server, no probe should wait long: the event loop must
 * never wait on a document, a lock or a database.
 */
export function probeHealth(base: string): { stop: () => Promise<HealthProbes> } {
  const agent = keepAliveAgent(1);
  let running = true;
  const found: HealthProbes = { count: 0, slowestMs: 0, failures: [] };
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const outcome = await exchange(base, { method: 'GET', path: '/healthz' }, { agent, timeoutMs: 10_000 }).then(
        (response) => (response.status === 200 ? undefined : `${response.status} ${response.body.slice(0, 200)}`),
        (error: unknown) => `no answer: ${error instanceof Error ? error.message : String(error)}`,
      );
      found.count++;
      found.slowestMs = Math.max(found.slowestMs, performance.now() - started);
      if (outcome !== undefined && found.failures.length < 10) found.failures.push(outcome);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      agent.destroy();
      return found;
    },
  };
}

/** What is wrong in `probes`: probes without their 200, and a stall longer than {@link MAX_PROBE_MS}. */
export function healthProblems(probes: HealthProbes): string[] {
  const problems = probes.failures.map((failure) => `/healthz did not answer 200: ${failure}`);
  if (probes.slowestMs > MAX_PROBE_MS) problems.push(`a health probe waited ${probes.slowestMs.toFixed(0)} ms (at most ${MAX_PROBE_MS}): the event loop stalled`);
  return problems;
}
