/**
 * The shape every chaos scenario has. A scenario is a module in chaos/scenarios/: the runner
 * (chaos/run.ts) imports each module there and calls every function it exports (the default
 * export first) with a {@link ChaosContext}; each resolves to one result or several (e.g. one per
 * database). A scenario that throws counts as failed, with the error as its detail.
 */

export interface ChaosContext {
  /** The quick version CI runs (seconds, not minutes): fewer loops, fewer requests. */
  readonly short: boolean;
  /** Seed of every random choice; the runner prints it, and `--seed` replays a run. */
  readonly seed: number;
  /** The repository's root folder (the built server is `dist/cli/main.js` under it). */
  readonly root: string;
  /** Prints a progress line under the scenario's name. */
  log(line: string): void;
}

export interface ScenarioResult {
  /** What ran, e.g. `kill -9 loops (sqlite)`. */
  name: string;
  passed: boolean;
  /** What was checked and what was found: figures when passed, the findings when failed. */
  detail: string;
}

export type ChaosScenario = (context: ChaosContext) => Promise<ScenarioResult | readonly ScenarioResult[]>;
