// Query benchmarks, run by bench/run.js between the REST scenarios and the events
// (`npm run bench`; BENCH_SCENARIOS=none BENCH_EVENTS=0 runs them alone).
//
// What it measures: restgraph (node dist/cli/main.js serve, default configuration, logging on)
// on SQLite, pinned to CPU 0, on the schema bench/queries/schema.yaml (customers and their
// orders, public) seeded with BENCH_QUERY_ROWS orders (default 100,000) and a tenth as many
// customers (bench/queries/data.js, imported with `restgraph import data`); the load
// (bench/load.js: wrk or autocannon, BENCH_CONNECTIONS connections) pinned to CPU 1. The
// scenarios (bench/queries/scenarios.js) are each checked once against the same query over the
// rows in memory, then loaded for BENCH_QUERY_DURATION seconds (default 5) after a 2 s warm-up,
// all of them in turn, BENCH_QUERY_ROUNDS times (default 3) on the same server and data;
// medians. Each is reported with its ratio to the plain sorted list of the same run
// (`orders sorted limit 20`), and a target where there is one: the list filtered by an `or` of
// two indexed conditions keeps at least 0.7 of the plain list's rate.
//
// Env: BENCH_QUERIES=0 skips them; BENCH_QUERY_SCENARIOS picks some by name (the plain list
// always runs, as the reference).
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtCount } from './lib/report.js';
import { runScenarioSet, seedAndServe, sizeAndTiming, WARMUP } from './lib/scenario-set.js';
import { exportText, makeQueryData } from './queries/data.js';
import { queryScenarios } from './queries/scenarios.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const schemaFile = join(benchDir, 'queries/schema.yaml');
const PLAIN = queryScenarios[0].name;

const list = (value) => value?.split(',').map((s) => s.trim()).filter(Boolean);

/** The query benchmarks' settings from the environment; throws on a bad one. */
export function queryConfig(env) {
  if (!['0', '1', undefined].includes(env.BENCH_QUERIES)) throw new Error('BENCH_QUERIES must be 0 or 1');
  const names = list(env.BENCH_QUERY_SCENARIOS);
  const unknown = (names ?? []).filter((n) => !queryScenarios.some((s) => s.name === n));
  if (unknown.length) throw new Error(`BENCH_QUERY_SCENARIOS: unknown ${unknown.join(', ')} (known: ${queryScenarios.map((s) => s.name).join(', ')})`);
  return {
    enabled: env.BENCH_QUERIES !== '0',
    scenarios: queryScenarios.filter((s) => s.name === PLAIN || !names || names.includes(s.name)).map((s) => s.name),
    ...sizeAndTiming(env, 'BENCH_QUERY', 'query'),
  };
}

/** Seconds the query benchmarks should take at most (seeding, start, every run, slack). */
export function queryPlannedSeconds(config) {
  if (!config.enabled) return 0;
  return 60 + config.rows / 5000 + config.rounds * config.scenarios.length * (WARMUP + config.duration + 20);
}

/** Runs the query benchmarks; resolves to their results (for results/latest.json). */
export async function runQueries({ config, sessionDir, engine, connections }) {
  const dir = mkdtempSync(join(sessionDir, 'queries-'));
  console.log(`\n=== queries (restgraph on SQLite, ${fmtCount(config.rows)} orders of ${fmtCount(Math.floor(config.rows / 10))} customers) ===`);
  const data = makeQueryData(config.rows);
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'queries.db')}`, RESTGRAPH_SCHEMA: schemaFile, RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' };
  const server = await seedAndServe({ dir, env, schemaFile, ndjson: exportText(data) });
  const scenarios = queryScenarios.filter((s) => config.scenarios.includes(s.name));
  const out = { generatedAt: new Date().toISOString(), rows: config.rows, rounds: config.rounds, durationSeconds: config.duration, scenarios: {} };
  try {
    out.scenarios = await runScenarioSet({ scenarios, server, data, size: config.rows, rounds: config.rounds, duration: config.duration, engine, connections, dir });
  } finally {
    await server.stop(15_000);
  }
  return out;
}
