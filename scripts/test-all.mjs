#!/usr/bin/env node
// `npm test`: every step of the suite, in order, each run even when one before it failed (a lint
// error must not hide a failing test on PostgreSQL), then a summary of each step's result and
// duration, and the tests that failed. Exits 1 when any step failed.
//
//   node scripts/test-all.mjs                    every step
//   node scripts/test-all.mjs sqlite postgres    the steps whose name contains one of these words
//
// Each step's output goes straight to the terminal. Ctrl-C stops the step running and skips the
// rest. The PostgreSQL pass reports "skipped" when scripts/test-postgres.mjs skips it (PostgreSQL
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
  { name: 'lint', shown: 'npm run lint', command: npmRun('lint') },
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
let running;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    // Ctrl-C reaches the step's processes by itself (the same process group); a SIGTERM is passed on.
    if (signal === 'SIGTERM') running?.kill('SIGTERM');
  });
}

function run(step) {
  return new Promise((resolve) => {
    const [command, ...args] = step.command;
    const child = spawn(command, args, {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, RESTGRAPH_TEST_SKIPPED_STATUS: String(SKIPPED) },
    });
    running = child;
    child.on('error', (error) => resolve({ status: 1, detail: error.message }));
    child.on('exit', (status, signal) => resolve({ status: status ?? 1, detail: signal === null ? undefined : `killed by ${signal}` }));
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
for (const step of steps) {
  if (interrupted) {
    results.push({ step, outcome: 'NOT RUN', ms: 0 });
    continue;
  }
  process.stdout.write(`\n━━━ npm test: ${step.name} (${step.shown})\n\n`);
  const stepStarted = Date.now();
  const { status, detail } = await run(step);
  const ms = Date.now() - stepStarted;
  const outcome = status === 0 ? 'PASS' : status === SKIPPED ? 'SKIPPED' : 'FAIL';
  results.push({ step, outcome, ms, status, detail, failures: step.report === undefined || outcome === 'SKIPPED' ? undefined : failuresOf(step.report) });
  process.stdout.write(`\n━━━ npm test: ${step.name}: ${outcome} in ${seconds(ms)}\n`);
}
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
