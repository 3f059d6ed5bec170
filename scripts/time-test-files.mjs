#!/usr/bin/env node
// Times each test file run alone, as a developer runs it: `npx vitest run test/x.test.ts` (SQLite)
// and `node scripts/test-postgres.mjs test/x.test.ts` (PostgreSQL), one file at a time, and prints
// the wall-clock seconds of each command, slowest first, flagging those at or over the limit
// (10 s: CONTRIBUTING.md, "a test file must run alone in under 10 s"). Wall-clock time includes vitest's start-up, the
// dist/ build check of test/global-setup.ts and the loading of the modules a file imports (about
// 1 s for a file that imports nothing, 2 s for one that builds the app, on a 2-core machine).
// The machine's other work counts too: on a shared machine, run a file near the limit again.
//
//   node scripts/time-test-files.mjs                       every file, on both databases
//   node scripts/time-test-files.mjs webhooks- events      the files whose path contains one of these
//   node scripts/time-test-files.mjs --sqlite | --postgres one database only
//   node scripts/time-test-files.mjs --runs 3 ...          each file 3 times (all times shown, sorted by the slowest)
//   node scripts/time-test-files.mjs --limit 8 ...         flag from 8 s instead of 10 s
//
// A failing run is marked FAIL and the end of its output printed; the script exits 1 when any
// run failed. The PostgreSQL runs need the server scripts/test-postgres.mjs needs (without it
// that script skips, and its times mean nothing).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
let runs = 1;
let limit = 10;
const filters = [];
const dialects = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--runs') runs = Number(args[++i]);
  else if (arg === '--limit') limit = Number(args[++i]);
  else if (arg === '--sqlite') dialects.push('sqlite');
  else if (arg === '--postgres') dialects.push('postgres');
  else if (arg === '--help' || arg === '-h') {
    process.stdout.write('usage: node scripts/time-test-files.mjs [--sqlite] [--postgres] [--runs N] [--limit S] [path filters...]\n');
    process.exit(0);
  } else filters.push(arg);
}
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number of runs, at least 1');
if (!(limit > 0)) throw new Error('--limit takes a number of seconds');
if (dialects.length === 0) dialects.push('sqlite', 'postgres');

const files = readdirSync(new URL('../test', import.meta.url))
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/${name}`)
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) throw new Error(`no test file matches ${filters.join(', ')}`);

const command = {
  sqlite: (file) => [fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url)), 'run', file],
  postgres: (file) => [fileURLToPath(new URL('./test-postgres.mjs', import.meta.url)), file],
};

/** Runs one file alone; resolves to its wall-clock seconds, whether it passed, and its output. */
function timeRun(dialect, file) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    // RESTGRAPH_TEST_DB is left to the scripts: test-postgres.mjs sets it, plain vitest means SQLite.
    const env = { ...process.env };
    delete env.RESTGRAPH_TEST_DB;
    const child = spawn(process.execPath, command[dialect](file), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      resolve({ seconds, passed: code === 0, output });
    });
  });
}

const rows = [];
let failed = false;
const total = files.length * dialects.length * runs;
let done = 0;
for (const file of files) {
  for (const dialect of dialects) {
    const times = [];
    let passed = true;
    for (let run = 0; run < runs; run++) {
      const result = await timeRun(dialect, file);
      done++;
      times.push(result.seconds);
      process.stderr.write(`[${done}/${total}] ${dialect.padEnd(8)} ${result.seconds.toFixed(1).padStart(5)} s ${result.passed ? '' : 'FAIL '}${file}\n`);
      if (!result.passed) {
        passed = false;
        failed = true;
        process.stderr.write(`${result.output.split('\n').slice(-40).join('\n')}\n`);
      }
    }
    rows.push({ file, dialect, times, slowest: Math.max(...times), passed });
  }
}

rows.sort((a, b) => b.slowest - a.slowest);
const width = Math.max(...rows.map((row) => row.file.length));
process.stdout.write(`\n${'file'.padEnd(width)}  database  seconds${runs > 1 ? ` (${runs} runs)` : ''}\n`);
for (const row of rows) {
  const seconds = row.times.map((time) => time.toFixed(1)).join(' ');
  const flags = [row.slowest >= limit ? `>= ${limit} s` : '', row.passed ? '' : 'FAIL'].filter(Boolean).join(', ');
  process.stdout.write(`${row.file.padEnd(width)}  ${row.dialect.padEnd(8)}  ${seconds}${flags ? `  <-- ${flags}` : ''}\n`);
}
const over = rows.filter((row) => row.slowest >= limit).length;
process.stdout.write(`\n${over} of ${rows.length} at or over ${limit} s${failed ? '; some runs FAILED' : ''}\n`);
process.exitCode = failed ? 1 : 0;
