#!/usr/bin/env node
// `npm test`: every step of the suite, in order, each run even when one before it failed (a lint
// error must not hide a failing test on PostgreSQL), then a summary of each step's result and
// duration, and the tests that failed. Exits 1 when any step failed.
//
//   node scripts/test-all.mjs                    every step
//   node scripts/test-all.mjs sqlite postgres    the steps whose name contains one of these words
//
// Each step's output goes straight to the terminal, but for the lint's: ESLint uses one core, so
// the lint runs beside the type-check and the build (on a 2-core machine they took about as long
// as the lint alone), and its output is shown once it is done, before the tests start. Ctrl-C
// stops the steps running and skips the rest. The PostgreSQL pass reports "skipped" when scripts/test-postgres.mjs skips it (PostgreSQL
// not reachable, outside CI).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = process.execPath;
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
/** The exit status scripts/test-postgres.mjs gives, when asked, for a pass it skipped (automake's "skipped"). */
const SKIPPED = 77;
const reports = mkdtempSync(join(tmpdir(), 'restgraph-test-all-'));
/** Vitest writes a JSON report too, for the summary's list of failed tests. */
const vitestReport = (name) => ['--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, `${name}.json`)}`];

/** `npm run <script>`, through the npm that runs this script when there is one. */
function npmRun(script) {
  const npm = process.env.npm_execpath;
  if (npm !== undefined && /\.[cm]?js$/.test(npm)) return [node, npm, 'run', '--silent', script];
  return [process.platform === 'win32' ? 'npm.cmd' : 'npm', 'run', '--silent', script];
}

const STEPS = [
  // beside: runs while the steps after it do, up to the first that runs tests (or the end).
  { name: 'lint', shown: 'npm run lint', command: npmRun('lint'), beside: true },
  { name: 'typecheck', shown: 'npm run typecheck', command: npmRun('typecheck') },
  // dist/ for the CLI tests and the chaos suite (the tests' global set-up would build it too).
  { name: 'build', shown: 'npm run build', command: npmRun('build') },
  { name: 'tests on SQLite', shown: 'vitest run', command: [node, vitest, 'run', ...vitestReport('sqlite')], report: 'sqlite' },
  { name: 'tests on PostgreSQL', shown: 'node scripts/test-postgres.mjs', command: [node, 'scripts/test-postgres.mjs', ...vitestReport('postgres')], report: 'postgres' },
  { name: 'chaos --short', shown: 'node scripts/chaos.mjs --short', command: [node, 'scripts/chaos.mjs', '--short'] },
];

const words = process.argv.slice(2);
const steps = words.length === 0 ? STEPS : STEPS.filter((step) => words.some((word) => step.name.includes(word)));
if (steps.length === 0) {
  process.stderr.write(`no step's name contains ${words.join(' or ')}; the steps: ${STEPS.map((step) => step.name).join(', ')}\n`);
  process.exit(2);
}

let interrupted = false;
const running = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    // Ctrl-C reaches the steps' processes by itself (the same process group); a SIGTERM is passed on.
    if (signal === 'SIGTERM') for (const child of running) child.kill('SIGTERM');
  });
}

/** Runs a step; `collect` takes its output instead of the terminal (a step run beside others). */
function run(step, collect) {
  return new Promise((resolve) => {
    const [command, ...args] = step.command;
    const child = spawn(command, args, {
      cwd: root,
      stdio: collect === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RESTGRAPH_TEST_SKIPPED_STATUS: String(SKIPPED) },
    });
    running.add(child);
    if (collect !== undefined) {
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
    }
    const done = (result) => {
      running.delete(child);
      resolve(result);
    };
    child.on('error', (error) => done({ status: 1, detail: error.message }));
    child.on('close', (status, signal) => done({ status: status ?? 1, detail: signal === null ? undefined : `killed by ${signal}` }));
  });
}

/** What a vitest JSON report says failed: files that did not load, then the tests, each one line. */
function failuresOf(report) {
  let parsed;
  try {
    parsed = JSON.parse(readFileSync(join(reports, `${report}.json`), 'utf8'));
  } catch {
    return undefined;
  }
  const lines = [];
  for (const file of parsed.testResults ?? []) {
    const path = relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    if (file.status === 'failed' && failed.length === 0) lines.push(`${path}: ${String(file.message ?? 'failed').split('\n')[0]}`);
    for (const test of failed) lines.push([path, ...(test.ancestorTitles ?? []), test.title].join(' > '));
  }
  return { total: parsed.numTotalTests ?? 0, failed: parsed.numFailedTests ?? 0, lines };
}

const seconds = (ms) => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
};

const started = Date.now();
const results = [];
/** The step running beside the others, if any: its result once done, and its output so far. */
let beside;

/** Records a step's result (in the order of STEPS) and prints its last line. */
function record(step, { status, detail }, ms) {
  const outcome = status === 0 ? 'PASS' : status === SKIPPED ? 'SKIPPED' : 'FAIL';
  results.push({ step, outcome, ms, status, detail, failures: step.report === undefined || outcome === 'SKIPPED' ? undefined : failuresOf(step.report) });
  process.stdout.write(`\n━━━ npm test: ${step.name}: ${outcome} in ${seconds(ms)}\n`);
}

/** Waits for the step running beside the others, then shows its output and result. */
async function besideDone() {
  if (beside === undefined) return;
  const { step, result, output, stepStarted } = beside;
  beside = undefined;
  const outcome = await result;
  const ms = Date.now() - stepStarted;
  process.stdout.write(`\n━━━ npm test: ${step.name} (${step.shown}), run beside the steps above\n\n`);
  process.stdout.write(Buffer.concat(output));
  record(step, outcome, ms);
}

for (const step of steps) {
  if (step.report !== undefined) await besideDone();
  if (interrupted) {
    results.push({ step, outcome: 'NOT RUN', ms: 0 });
    continue;
  }
  const stepStarted = Date.now();
  if (step.beside === true && beside === undefined) {
    process.stdout.write(`\n━━━ npm test: ${step.name} (${step.shown}) started; its output follows once it is done\n`);
    const output = [];
    beside = { step, output, stepStarted, result: run(step, (chunk) => output.push(chunk)) };
    continue;
  }
  process.stdout.write(`\n━━━ npm test: ${step.name} (${step.shown})\n\n`);
  record(step, await run(step), Date.now() - stepStarted);
}
await besideDone();
// In the order of STEPS (the step run beside the others ended after some of the steps that followed it).
results.sort((a, b) => STEPS.indexOf(a.step) - STEPS.indexOf(b.step));
rmSync(reports, { recursive: true, force: true });

const failed = results.filter((result) => result.outcome === 'FAIL');
const width = Math.max(...results.map((result) => result.step.name.length));
const summary = [`\nnpm test: ${results.filter((result) => result.outcome === 'PASS').length} of ${results.length} steps passed in ${seconds(Date.now() - started)}`];
for (const result of results) {
  const notes = [];
  if (result.failures !== undefined) notes.push(`${result.failures.total} tests, ${result.failures.failed} failed`);
  if (result.outcome === 'FAIL') notes.push(result.detail ?? `exit status ${result.status}`);
  if (result.outcome === 'SKIPPED') notes.push('see its message above');
  summary.push(`  ${result.outcome.padEnd(7)} ${result.step.name.padEnd(width)}  ${seconds(result.ms).padStart(10)}${notes.length > 0 ? `   ${notes.join('; ')}` : ''}`);
  if (result.outcome === 'FAIL') {
    const lines = result.failures?.lines ?? [];
    for (const line of lines.slice(0, 30)) summary.push(`            ✗ ${line}`);
    if (lines.length > 30) summary.push(`            … and ${lines.length - 30} more`);
  }
}
process.stdout.write(`${summary.join('\n')}\n`);
process.exit(interrupted ? 130 : failed.length > 0 ? 1 : 0);
