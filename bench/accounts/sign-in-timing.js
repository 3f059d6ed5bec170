// Sign-in of an unknown identifier against a wrong password for a known one (bench/accounts.js):
// both must take about as long (docs/accounts.md, "No enumeration through sign-in": an unknown
// identifier is checked against a dummy hash of the same cost), or the time of an answer tells
// whether an account exists. One request at a time on a quiet server, the two kinds interleaved
// (A B B A, so that drift and order weigh on both alike), every answer checked to be the 401;
// the time of each from the client's side, as an attacker would see it. Ratio unknown / wrong:
// ~1.0 expected.
import { renderTable } from '../lib/report.js';
import { median } from '../lib/scenario-set.js';
import { BENCH_EMAIL } from './scenarios.js';

export const UNKNOWN_EMAIL = 'nobody-here@example.com';
const WRONG_PASSWORD = 'not the bench passphrase 0123';

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

/** One sign-in; resolves to its milliseconds. Throws unless it is the 401 invalid-credentials. */
async function timedSignIn(url, email) {
  const start = performance.now();
  const res = await fetch(`${url}/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: WRONG_PASSWORD }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = await res.text();
  const ms = performance.now() - start;
  if (res.status !== 401 || !body.includes('"invalid-credentials"')) throw new Error(`sign-in of ${email} answered ${res.status}, expected 401 invalid-credentials: ${body.slice(0, 200)}`);
  return ms;
}

/**
 * `pairs` sign-ins of each kind after `warmup` pairs; prints their medians and p90 side by side and
 * the ratio; resolves to { pairs, unknown: { p50Ms, p90Ms }, wrongPassword: { p50Ms, p90Ms }, ratio }.
 * The server must not throttle failed sign-ins (RESTGRAPH_RATE_LIMIT_SIGN_IN_FAILURES raised).
 */
export async function signInTiming(url, { pairs = 50, warmup = 5 } = {}) {
  const times = { unknown: [], wrong: [] };
  for (let i = 0; i < warmup + pairs; i++) {
    const order = i % 2 === 0 ? ['unknown', 'wrong'] : ['wrong', 'unknown'];
    for (const kind of order) {
      const ms = await timedSignIn(url, kind === 'unknown' ? UNKNOWN_EMAIL : BENCH_EMAIL);
      if (i >= warmup) times[kind].push(ms);
    }
  }
  const stats = (xs) => ({ p50Ms: median(xs), p90Ms: quantile(xs, 0.9) });
  const out = { pairs, unknown: stats(times.unknown), wrongPassword: stats(times.wrong) };
  out.ratio = out.unknown.p50Ms / out.wrongPassword.p50Ms;
  console.log(`\n  sign-in refused, one at a time (${pairs} of each, interleaved, after ${warmup} of each to warm up):`);
  renderTable(
    [
      ['sign-in', 'p50 ms', 'p90 ms', 'ratio', 'to', 'expected'],
      ['wrong password (known email)', out.wrongPassword.p50Ms.toFixed(1), out.wrongPassword.p90Ms.toFixed(1), '', '', ''],
      ['unknown email', out.unknown.p50Ms.toFixed(1), out.unknown.p90Ms.toFixed(1), out.ratio.toFixed(2), 'wrong password', '~1.0'],
    ],
    [0, 4],
  );
  return out;
}
