// Mapped-database benchmarks, run by bench/run.js after the rule benchmarks (`npm run bench`;
// BENCH_SCENARIOS=none BENCH_QUERIES=0 BENCH_RULES=0 BENCH_ACCOUNTS=0 BENCH_FILES=0 BENCH_EVENTS=0
// runs them alone).
//
// What it measures: what serving an existing database costs against serving restgraph's own
// tables, on the same rows. Two restgraph servers (node dist/cli/main.js serve, default
// configuration, logging on) on SQLite, both pinned to CPU 0, one loaded at a time:
//
//   A (mapped)            the film-rental sample database (examples/film-rental/sqlite.sql) in a
//                         fresh file, seeded with BENCH_MAPPED_ROWS rentals (default 100,000; the
//                         largest table) and customers, inventory and films in proportion
//                         (bench/mapped/data.js), served through the schema that the CLI's own
//                         `restgraph init --from` writes for it, unedited
//   A (mapped, WAL)       the same, on a copy of that file switched to WAL mode (PRAGMA
//                         journal_mode = WAL): the sample's file keeps SQLite's default rollback
//                         journal, which restgraph leaves as it is, while B's file is in WAL mode,
//                         as restgraph makes its own; this side shows what the journal mode weighs
//   B (own tables)        restgraph's own tables of the same shape (bench/mapped/schema.yaml),
//                         holding the same rows, seeded with `restgraph import data`
//
// Every request carries the same JWT (HS256) on both sides: both schemas leave access at its
// default, any valid token. The load (bench/load.js: wrk or autocannon) is pinned to CPU 1. The
// three pairs of scenarios (bench/mapped/scenarios.js: one rental by its key, which is a uuid on A
// and an integer id on B; a customer's rentals sorted by date, latest first, limit 20; GraphQL: a
// customer with their 2 latest rentals and each one's film through its inventory) are checked once
// against the rows in memory, then loaded for BENCH_MAPPED_DURATION seconds (default 5) after a 2 s
// warm-up, B then A then A (WAL), scenario after scenario, BENCH_MAPPED_ROUNDS times (default 3);
// medians, and each A scenario's ratio to its B twin of the same run (target >= 0.9).
//
// Env: BENCH_MAPPED=0 skips them.
import { createHmac } from 'node:crypto';
import { copyFileSync, mkdtempSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtCount } from './lib/report.js';
import { runRestgraphCli, runScenarioSet, seedAndServe, sizeAndTiming, WARMUP } from './lib/scenario-set.js';
import { counts, exportText, makeMappedData, writeSampleDatabase } from './mapped/data.js';
import { mappedScenarios } from './mapped/scenarios.js';
import { serveRestgraph } from './servers.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const schemaB = join(benchDir, 'mapped/schema.yaml');
const SECRET = 'restgraph-bench-mapped-secret-0123456789';

/** The mapped-database benchmarks' settings from the environment; throws on a bad one. */
export function mappedConfig(env) {
  if (!['0', '1', undefined].includes(env.BENCH_MAPPED)) throw new Error('BENCH_MAPPED must be 0 or 1');
  return { enabled: env.BENCH_MAPPED !== '0', ...sizeAndTiming(env, 'BENCH_MAPPED', 'mapped') };
}

/** Seconds the mapped-database benchmarks should take at most (seeding both sides, starts, every run, slack). */
export function mappedPlannedSeconds(config) {
  if (!config.enabled) return 0;
  return 90 + config.rows / 1000 + config.rounds * mappedScenarios.length * (WARMUP + config.duration + 20);
}

const base64url = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An HS256 JWT, valid for a day. */
function jwt() {
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ sub: 'bench', iat: now, exp: now + 86_400 })}`;
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
}

/** The server's environment: this one's, but for logging and an admin token (defaults, as `restgraph serve` runs). */
function serverEnv(databaseUrl, schemaFile) {
  const env = { ...process.env, DATABASE_URL: databaseUrl, RESTGRAPH_SCHEMA: schemaFile, RESTGRAPH_JWT_SECRET: SECRET };
  delete env.LOG_LEVEL;
  delete env.RESTGRAPH_ADMIN_TOKEN;
  return env;
}

/** Switches a SQLite file to WAL mode (it stays so: the mode is kept in the file). */
function switchToWal(file) {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = wal');
  } finally {
    db.close();
  }
}

/** Runs the mapped-database benchmarks; resolves to their results (for results/latest.json). */
export async function runMapped({ config, sessionDir, engine, connections }) {
  const dir = mkdtempSync(join(sessionDir, 'mapped-'));
  const n = counts(config.rows);
  console.log(
    `\n=== mapped database (restgraph on SQLite: the film-rental sample, ${fmtCount(n.rentals)} rentals, ${fmtCount(n.customers)} customers, ` +
      `${fmtCount(n.inventory)} inventory, ${fmtCount(n.films)} films, against restgraph's own tables with the same rows; one JWT) ===`,
  );
  const data = makeMappedData(config.rows);
  const fileA = join(dir, 'film-rental.db');
  const schemaA = join(dir, 'film-rental.yaml');
  let t0 = Date.now();
  writeSampleDatabase(fileA, data);
  await runRestgraphCli(['init', '--from', `sqlite:${fileA}`, '-o', schemaA], process.env);
  console.log(`  A (mapped): sample database seeded and mapped by restgraph init --from in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const fileAW = join(dir, 'film-rental-wal.db');
  copyFileSync(fileA, fileAW);
  switchToWal(fileAW);
  let serverA;
  let serverAW;
  let serverB;
  try {
    t0 = Date.now();
    serverA = await serveRestgraph({ name: 'restgraph-mapped', env: serverEnv(`sqlite:${fileA}`, schemaA), logFile: join(dir, 'server-a.stderr.log') });
    console.log(`  A (mapped): started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    serverAW = await serveRestgraph({ name: 'restgraph-mapped-wal', env: serverEnv(`sqlite:${fileAW}`, schemaA), logFile: join(dir, 'server-aw.stderr.log') });
    process.stdout.write('  B (own tables): ');
    serverB = await seedAndServe({ dir, env: serverEnv(`sqlite:${join(dir, 'restgraph.db')}`, schemaB), schemaFile: schemaB, ndjson: exportText(data) });
    const out = { generatedAt: new Date().toISOString(), rows: config.rows, counts: n, rounds: config.rounds, durationSeconds: config.duration, scenarios: {} };
    out.scenarios = await runScenarioSet({
      scenarios: mappedScenarios.map((s) => ({ ...s, server: { A: serverA, AW: serverAW, B: serverB }[s.side] })),
      server: serverB,
      data,
      headers: { authorization: `Bearer ${jwt()}` },
      size: config.rows,
      rounds: config.rounds,
      duration: config.duration,
      engine,
      connections,
      dir,
    });
    return out;
  } finally {
    await serverA?.stop(15_000);
    await serverAW?.stop(15_000);
    await serverB?.stop(15_000);
  }
}
