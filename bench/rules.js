// Rule benchmarks, run by bench/run.js after the query benchmarks (`npm run bench`;
// BENCH_SCENARIOS=none BENCH_QUERIES=0 BENCH_EVENTS=0 runs them alone).
//
// What it measures: what a row rule costs on the request path. restgraph (node dist/cli/main.js
// serve, default configuration, logging on) on SQLite, pinned to CPU 0, on the schema
// bench/rules/schema.yaml: the same BENCH_RULE_ROWS posts (default 100,000; bench/rules/data.js)
// in `posts`, whose lists and reads have the rule `published = true or authorId = @auth.sub`,
// and in `plainPosts`, which has no rule. Every request carries the same JWT (HS256, subject
// `user-7`), on both sides, so the rule has a subject to compare and authentication costs the
// same. The load (bench/load.js: wrk or autocannon) is pinned to CPU 1. The four scenarios
// (bench/rules/scenarios.js: get-by-id and the list sorted by title, limit 20, each with and
// without the rule) are checked once against the rows in memory (the rule hides another author's
// draft: 404; it shows the subject's own), then loaded for BENCH_RULE_DURATION seconds (default
// 5) after a 2 s warm-up, in turn, BENCH_RULE_ROUNDS times (default 3) on the same server; medians,
// and each ruled scenario's ratio to its plain twin of the same run (target >= 0.85).
//
// Env: BENCH_RULES=0 skips them.
import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtCount } from './lib/report.js';
import { runScenarioSet, seedAndServe, sizeAndTiming, WARMUP } from './lib/scenario-set.js';
import { exportText, makeRuleData, SUBJECT } from './rules/data.js';
import { ruleScenarios } from './rules/scenarios.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const schemaFile = join(benchDir, 'rules/schema.yaml');
const SECRET = 'restgraph-bench-rules-secret-0123456789';

/** The rule benchmarks' settings from the environment; throws on a bad one. */
export function ruleConfig(env) {
  if (!['0', '1', undefined].includes(env.BENCH_RULES)) throw new Error('BENCH_RULES must be 0 or 1');
  return { enabled: env.BENCH_RULES !== '0', ...sizeAndTiming(env, 'BENCH_RULE', 'rule') };
}

/** Seconds the rule benchmarks should take at most (seeding, start, every run, slack). */
export function rulePlannedSeconds(config) {
  if (!config.enabled) return 0;
  return 60 + config.rows / 2500 + config.rounds * ruleScenarios.length * (WARMUP + config.duration + 20);
}

const base64url = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** An HS256 JWT for `payload`, valid for a day. */
function jwt(payload) {
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ ...payload, iat: now, exp: now + 86_400 })}`;
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
}

/** Runs the rule benchmarks; resolves to their results (for results/latest.json). */
export async function runRules({ config, sessionDir, engine, connections }) {
  const dir = mkdtempSync(join(sessionDir, 'rules-'));
  console.log(`\n=== rules (restgraph on SQLite, ${fmtCount(config.rows)} posts, with and without a rule, one JWT) ===`);
  const data = makeRuleData(config.rows);
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'rules.db')}`, RESTGRAPH_SCHEMA: schemaFile, RESTGRAPH_JWT_SECRET: SECRET };
  const server = await seedAndServe({ dir, env, schemaFile, ndjson: exportText(data) });
  const out = { generatedAt: new Date().toISOString(), rows: config.rows, rounds: config.rounds, durationSeconds: config.duration, scenarios: {} };
  try {
    out.scenarios = await runScenarioSet({
      scenarios: ruleScenarios,
      server,
      data,
      headers: { authorization: `Bearer ${jwt({ sub: SUBJECT })}` },
      size: config.rows,
      rounds: config.rounds,
      duration: config.duration,
      engine,
      connections,
      dir,
    });
  } finally {
    await server.stop(15_000);
  }
  return out;
}
