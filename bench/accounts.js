// Accounts benchmarks, run by bench/run.js after the rule benchmarks (`npm run bench`;
// BENCH_SCENARIOS=none BENCH_QUERIES=0 BENCH_RULES=0 BENCH_EVENTS=0 runs them alone).
//
// What it measures: restgraph (node dist/cli/main.js serve, default configuration, logging on) on
// SQLite, pinned to CPU 0, on bench/accounts/schema.yaml with BENCH_ACCOUNT_ROWS notes (default
// 10,000) and one account signed up through the API. Three scenarios (bench/accounts/scenarios.js),
// loaded by bench/load.js (pinned to CPU 1) for BENCH_ACCOUNT_DURATION seconds (default 5) after a
// 2 s warm-up, in turn, BENCH_ACCOUNT_ROUNDS times (default 3) on the same server; medians:
//
// - sign-in: POST /v1/auth/sign-in with the account's valid password: bound by Argon2id (its
//   parameters m, t, p are printed), so sign-ins per second, not requests, is the figure;
// - get-by-id with the account's access token (EdDSA JWT, verified on every request) against the
//   same request with an API key (verified once, then cached): ratio target >= 0.9.
//
// Before the load, on the quiet server: sign-ins refused for an unknown email against those
// refused for a wrong password of the account, one at a time, interleaved (bench/accounts/
// sign-in-timing.js): their medians side by side, ratio ~1.0 expected (no enumeration by timing).
//
// The access token lives RESTGRAPH_ACCESS_TOKEN_SECONDS (set to a day here, so it outlives the run);
// the account throttle per address and the anonymous quota are raised so that the sign-in load is
// not refused. Before any load: the token and the key each read a note, and a request without a
// credential, and one with a forged token, are refused with 401.
//
// Env: BENCH_ACCOUNTS=0 skips them; BENCH_ACCOUNT_TIMING_PAIRS (default 50) sign-ins of each kind
// for the timing comparison. `node bench/accounts.js` runs them alone (with bench/run.js's
// BENCH_LOADGEN and BENCH_CONNECTIONS).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requester } from './lib/check-requests.js';
import { hasCommand, killAllNow } from './lib/proc.js';
import { fmtCount } from './lib/report.js';
import { runRestgraphCli, runScenarioSet, seedAndServe, sizeAndTiming, WARMUP } from './lib/scenario-set.js';
import { accountScenarios, BENCH_EMAIL, BENCH_PASSWORD } from './accounts/scenarios.js';
import { signInTiming } from './accounts/sign-in-timing.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const schemaFile = join(benchDir, 'accounts/schema.yaml');

/** The accounts benchmarks' settings from the environment; throws on a bad one. */
export function accountConfig(env) {
  if (!['0', '1', undefined].includes(env.BENCH_ACCOUNTS)) throw new Error('BENCH_ACCOUNTS must be 0 or 1');
  const timingPairs = Number(env.BENCH_ACCOUNT_TIMING_PAIRS ?? 50);
  if (!(Number.isInteger(timingPairs) && timingPairs > 0)) throw new Error(`bad account setting BENCH_ACCOUNT_TIMING_PAIRS: ${env.BENCH_ACCOUNT_TIMING_PAIRS}`);
  return { enabled: env.BENCH_ACCOUNTS !== '0', timingPairs, ...sizeAndTiming({ BENCH_ACCOUNT_ROWS: 10_000, ...env }, 'BENCH_ACCOUNT', 'account') };
}

/** Seconds the accounts benchmarks should take at most (seeding, start, every run, slack). */
export function accountPlannedSeconds(config) {
  if (!config.enabled) return 0;
  return 60 + config.rows / 2500 + config.timingPairs + config.rounds * accountScenarios.length * (WARMUP + config.duration + 20);
}

/** The notes every run reads, deterministic. */
function makeNotes(rows) {
  return Array.from({ length: rows }, (_, i) => ({ id: i + 1, title: `note-${i + 1}`, body: `the body of note ${i + 1}` }));
}

/** The Argon2id parameters of this checkout's build (dist/). */
async function argon2Parameters() {
  const { ARGON2_PARAMETERS } = await import(join(benchDir, '../dist/core/accounts/password-hashing.js'));
  return { m: ARGON2_PARAMETERS.memoryCost, t: ARGON2_PARAMETERS.timeCost, p: ARGON2_PARAMETERS.parallelism };
}

/** Signs the bench account up and in; resolves to its access token. Throws when either fails. */
async function accessToken(url) {
  const request = requester(url);
  const up = await request('POST', '/v1/auth/sign-up', { email: BENCH_EMAIL, password: BENCH_PASSWORD });
  if (up.status !== 201) throw new Error(`sign-up answered ${up.status}: ${JSON.stringify(up.json)}`);
  const signIn = await request('POST', '/v1/auth/sign-in', { email: BENCH_EMAIL, password: BENCH_PASSWORD });
  if (signIn.status !== 200 || typeof signIn.json?.accessToken !== 'string') throw new Error(`sign-in answered ${signIn.status}: ${JSON.stringify(signIn.json)}`);
  return signIn.json.accessToken;
}

/** Without a credential, and with the token's signature changed: both must be 401. */
async function refusals(url, token) {
  const forged = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  const problems = [];
  for (const [what, headers] of [['no credential', {}], ['a forged token', { authorization: `Bearer ${forged}` }]]) {
    const res = await requester(url, headers)('GET', '/notes/1');
    if (res.status !== 401) problems.push(`GET /notes/1 with ${what} -> ${res.status}, expected 401`);
  }
  return problems;
}

/** Runs the accounts benchmarks; resolves to their results (for results/latest.json). */
export async function runAccounts({ config, sessionDir, engine, connections }) {
  const dir = mkdtempSync(join(sessionDir, 'accounts-'));
  const argon2 = await argon2Parameters();
  console.log(`\n=== accounts (restgraph on SQLite, ${fmtCount(config.rows)} notes; Argon2id m=${argon2.m} KiB, t=${argon2.t}, p=${argon2.p}) ===`);
  const data = { notes: makeNotes(config.rows) };
  const databaseUrl = `sqlite:${join(dir, 'accounts.db')}`;
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    RESTGRAPH_SCHEMA: schemaFile,
    RESTGRAPH_ACCESS_TOKEN_SECONDS: '86400',
    RESTGRAPH_RATE_LIMIT_ACCOUNT_REQUESTS: '100000000/1m',
    RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off',
    // The timing comparison fails sign-ins of two identifiers many times over.
    RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES: '100000000/1m',
  };
  const ndjson = data.notes.map((record) => JSON.stringify({ resource: 'notes', record })).join('\n') + '\n';
  const server = await seedAndServe({ dir, env, schemaFile, ndjson });
  const out = { generatedAt: new Date().toISOString(), rows: config.rows, rounds: config.rounds, durationSeconds: config.duration, argon2, scenarios: {} };
  try {
    const token = await accessToken(server.url);
    const created = await runRestgraphCli(['token', 'create', schemaFile, '--scopes', 'notes:write', '--name', 'bench', '-d', databaseUrl], env);
    const key = created.trim().split('\n').at(-1);
    const refused = await refusals(server.url, token);
    if (refused.length) throw new Error(`accounts checks: ${refused.join('; ')}`);
    out.signInTiming = await signInTiming(server.url, { pairs: config.timingPairs });
    const headers = { 'get-by-id (API key)': { authorization: `Bearer ${key}` }, 'get-by-id (access token)': { authorization: `Bearer ${token}` } };
    out.scenarios = await runScenarioSet({
      scenarios: accountScenarios.map((s) => ({ ...s, headers: headers[s.name] ?? {} })),
      server,
      data,
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

// `node bench/accounts.js`: the accounts benchmarks alone, as bench/run.js would run them.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sessionDir = mkdtempSync(join(tmpdir(), 'restgraph-bench-'));
  process.on('exit', () => {
    killAllNow();
    rmSync(sessionDir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  const config = accountConfig(process.env);
  const engine = process.env.BENCH_LOADGEN ?? (hasCommand('wrk', ['-v']) ? 'wrk' : 'autocannon');
  await runAccounts({ config, sessionDir, engine, connections: Number(process.env.BENCH_CONNECTIONS ?? 32) });
}
