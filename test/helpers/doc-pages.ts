import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from './cli-process.js';
import { fourDigitPort, releasePort } from './ports.js';
import { compareOutput, consoleBlocks, pairValues, substitute, type DocBlock, type DocCommand, type ValueMap } from './doc-examples.js';
import { TEST_DIALECT } from './test-database.js';

/**
 * Every console example of README.md and docs/*.md, run in order against a fresh server, as
 * printed: the convention is in test/helpers/doc-examples.ts and docs/README.md. Each page runs
 * in a folder of its own, standing in for a clone of restgraph at FOLDER. With
 * DOCS_EXAMPLES_UPDATE=1, outputs that differ are written back into the pages instead.
 *
 * The pages are run by the test/docs-examples-*.test.ts files, a group of pages each
 * (describeDocPages), so that one file alone takes a few seconds; the last group takes every page
 * no other group names, so that a new page is run too.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const FOLDER = '/home/me/restgraph';
const UPDATE = process.env.DOCS_EXAMPLES_UPDATE === '1';
/** The ports the pages show, and the free ones the run uses instead. */
const SHOWN_PORTS = [3000, 4000];

const allPages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
  .map((path) => ({ path, blocks: consoleBlocks(readFileSync(join(ROOT, path), 'utf8')) }))
  .filter((page) => page.blocks.length > 0);
// DOCS_EXAMPLES_PAGES=README.md,docs/auth.md runs only those pages.
const pages = allPages.filter((page) => !process.env.DOCS_EXAMPLES_PAGES || process.env.DOCS_EXAMPLES_PAGES.split(',').includes(page.path));

/** One bash, in which a page's commands run one after another. */
class Shell {
  private readonly bash: ChildProcessWithoutNullStreams;
  private output = '';
  private waiting: (() => void) | undefined;
  private count = 0;

  constructor(readonly dir: string, env: NodeJS.ProcessEnv) {
    // A process group of its own: whatever a page started (servers, jobs) goes with it, even when a command hung.
    this.bash = spawn('bash', ['--norc', '--noprofile'], { cwd: dir, env, detached: true });
    this.bash.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
      this.waiting?.();
    });
    this.bash.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.output += chunk;
      this.waiting?.();
    });
  }

  /** Runs `script` in the shell; resolves to what it printed. */
  async run(script: string, timeoutMs = 30_000): Promise<string> {
    const marker = `__docs_example_${++this.count}__`;
    this.output = '';
    this.bash.stdin.write(`{\n${script}\n} </dev/null 2>&1\nprintf '\\n%s\\n' '${marker}'\n`);
    const deadline = Date.now() + timeoutMs;
    while (!this.output.includes(`\n${marker}\n`)) {
      if (Date.now() > deadline) throw new Error(`no end after ${timeoutMs} ms; printed so far:\n${this.output}`);
      await new Promise<void>((wake) => {
        this.waiting = wake;
        setTimeout(wake, 200);
      });
    }
    return this.output.slice(0, this.output.indexOf(`\n${marker}\n`));
  }

  async close(): Promise<void> {
    await this.run('rg_stop_server; rg_stop_jobs', 20_000).catch(() => undefined);
    this.bash.stdin.end();
    const group = (signal: NodeJS.Signals): void => {
      try {
        if (this.bash.pid !== undefined) process.kill(-this.bash.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => group('SIGKILL'), 5_000);
    if (this.bash.exitCode === null && this.bash.signalCode === null) await new Promise((done) => this.bash.once('close', done));
    clearTimeout(timer);
    // A server or job left behind by a command that never ended.
    group('SIGKILL');
  }
}

/** Shell functions standing in for npm start and npx restgraph, and for running servers and jobs. */
const PRELUDE = String.raw`
set +m
npm() {
  case "$1" in
    start) shift; [ "$1" = -- ] && shift; rg_exec node "$RG_CLI" serve "$@";;
    install) ;;
    *) echo "npm $1: not run by the docs examples test" >&2; return 1;;
  esac
}
npx() {
  if [ "$1" = restgraph ]; then shift; if [ "$1" = serve ]; then rg_exec node "$RG_CLI" "$@"; else node "$RG_CLI" "$@"; fi
  else command npx "$@"; fi
}
restgraph() { if [ "$1" = serve ]; then rg_exec node "$RG_CLI" "$@"; else node "$RG_CLI" "$@"; fi; }
# A server runs in a subshell of its own, which it replaces (so that it gets the signals); never the page's shell.
rg_exec() { if [ "$BASH_SUBSHELL" -gt 0 ]; then exec "$@"; else "$@"; fi; }
RG_SERVER_PID=
rg_stop_server() { if [ -n "$RG_SERVER_PID" ]; then kill -TERM "$RG_SERVER_PID" 2>/dev/null; wait "$RG_SERVER_PID" 2>/dev/null; RG_SERVER_PID=; fi; }
rg_wait_server() {
  for _ in $(seq 1 300); do
    grep -qs 'restgraph listening' .server.log && { sleep 0.05; cat .server.log; return; }
    kill -0 "$RG_SERVER_PID" 2>/dev/null || { wait "$RG_SERVER_PID"; rg_status=$?; cat .server.log; [ "$rg_status" -gt 1 ] && echo "(the server exited with status $rg_status)"; RG_SERVER_PID=; return; }
    sleep 0.05
  done
  cat .server.log; echo '(not listening after 15 s)'
}
RG_JOBS=; RG_JOB_LOGS=; RG_JOB_COUNT=0
# \`wait\` waits for the page's own jobs (the server runs in another terminal, as far as the page
# knows), bounded: a job still running after 10 s is stopped, and says so.
rg_wait_jobs() {
  for _ in $(seq 1 200); do
    running=; for job in $RG_JOBS; do kill -0 "$job" 2>/dev/null && running=1; done
    [ -z "$running" ] && break; sleep 0.05
  done
  [ -n "$running" ] && { kill $RG_JOBS 2>/dev/null; }
  [ -n "$RG_JOBS" ] && wait $RG_JOBS 2>/dev/null
  for log in $RG_JOB_LOGS; do cat "$log"; done
  [ -n "$running" ] && echo '(a job was still running after 10 s: stopped)'
  RG_JOBS=; RG_JOB_LOGS=
}
rg_stop_jobs() { [ -n "$RG_JOBS" ] && kill $RG_JOBS 2>/dev/null; RG_JOBS=; RG_JOB_LOGS=; }
`;

const SERVER_COMMAND = /^(?:npm install && )?(?:[A-Z_][A-Z0-9_]*=(?:'[^']*'|"[^"]*"|\S*)\s+)*(?:npm start|npx restgraph serve|restgraph serve)\b/;

/** The script that runs one documented command. */
function scriptFor(command: string): string {
  // The log goes first: the background subshell truncates it only once it runs, and until then
  // rg_wait_server would read the previous server's "restgraph listening" (on a busy machine, a
  // restart then printed nothing, and the next commands found no server).
  if (SERVER_COMMAND.test(command)) return `rg_stop_server\nrm -f .server.log\n( ${command}\n) >.server.log 2>&1 &\nRG_SERVER_PID=$!\nrg_wait_server`;
  // `wait`, alone or first in a list (`wait; cat subscriber.log`).
  const waited = /^\s*wait(\s*(?:;|&&)[^]*)?\s*$/.exec(command);
  if (waited) return `rg_wait_jobs${waited[1] ?? ''}`;
  const background = /^([^]*?)\s*&\s*$/.exec(command);
  const job = background?.[1];
  if (job !== undefined && !job.endsWith('&')) {
    return [
      `RG_JOB_COUNT=$((RG_JOB_COUNT + 1)); RG_LOG=".job-$RG_JOB_COUNT.log"`,
      `( ${job}\n) >"$RG_LOG" 2>&1 &`,
      // The next command follows at once, as in a shell the block is pasted into: a page that
      // needs the job ready first must say so (and wait for it) itself.
      'RG_JOBS="$RG_JOBS $!"; RG_JOB_LOGS="$RG_JOB_LOGS $RG_LOG"',
    ].join('\n');
  }
  return command;
}


/** The last lines the page's server printed, to tell a mismatch caused by the server (a failed start). */
function serverLogTail(dir: string): string {
  let log: string;
  try {
    log = readFileSync(join(dir, '.server.log'), 'utf8');
  } catch {
    return '';
  }
  return `--- the server's last lines ---\n${log.trimEnd().split('\n').slice(-5).join('\n')}\n`;
}


/** Runs a page's examples in order; resolves to what did not match (empty when all did). */
async function runPage(page: { path: string; blocks: DocBlock[] }): Promise<string[]> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'restgraph-docs-')));
  for (const name of ['dist', 'examples', 'node_modules', 'schema']) symlinkSync(join(ROOT, name), join(dir, name));
  const ports = new Map<number, number>();
  for (const shown of SHOWN_PORTS) ports.set(shown, await fourDigitPort());
  // The pages show what a person sees in a terminal: the readable log (a terminal's colours left out).
  // Their servers write to a file here, which would get JSON lines.
  const shell = new Shell(dir, cleanEnv({ RG_CLI: CLI, PORT: String(ports.get(3000)), NO_COLOR: '1', RESTGRAPH_LOG_FORMAT: 'pretty' }));
  const values: ValueMap = new Map();
  const failures: string[] = [];
  const rewrites: { command: DocCommand; output: string }[] = [];
  /** DOCS_EXAMPLES_UPDATE=1: the values shown by the outputs rewritten, and those of the run. */
  const updated: ValueMap = new Map();
  try {
    await shell.run(PRELUDE);
    for (const example of page.blocks.flatMap((block) => block.commands)) {
      let command = substitute(example.command, values);
      for (const [shown, port] of ports) {
        command = command.replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${shown}\\b`, 'g'), `$1:${port}`).replace(new RegExp(`--port ${shown}\\b`, 'g'), `--port ${port}`);
      }
      const started = Date.now();
      let output = (await shell.run(scriptFor(command))).replace(/\r\n/g, '\n').split(dir).join(FOLDER);
      // DOCS_EXAMPLES_TRACE=1: each command, and how long it took (to see where a page's time goes).
      if (process.env.DOCS_EXAMPLES_TRACE) console.error(`» ${String(Date.now() - started).padStart(5)} ms ${command.slice(0, 120)}`);
      for (const [shown, port] of ports) output = output.replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${port}\\b`, 'g'), `$1:${shown}`);
      output = output
        .split('\n')
        .filter((line) => !/^(date|connection|keep-alive): /i.test(line) && !/^x-request-id: [0-9a-f-]{36}$/i.test(line))
        .join('\n')
        .replace(/\s+$/, '');
      const problem = compareOutput(example.expected, output, values);
      if (problem === undefined) continue;
      if (UPDATE) {
        const paired: ValueMap = new Map();
        pairValues(example.expected, output, paired);
        for (const [shown, real] of paired) {
          if (!values.has(shown)) values.set(shown, real);
          updated.set(shown, real);
        }
        rewrites.push({ command: example, output });
        continue;
      }
      failures.push(`${page.path}:${example.line}: ${problem}\n$ ${example.command}\n--- shown ---\n${example.expected}\n--- printed ---\n${output}\n${serverLogTail(dir)}`);
    }
  } finally {
    await shell.close();
    rmSync(dir, { recursive: true, force: true });
    for (const port of ports.values()) releasePort(port);
  }
  if (UPDATE && rewrites.length > 0) rewritePage(page.path, page.blocks.flatMap((block) => block.commands), rewrites, updated);
  return failures;
}

/** The pages of each docs-examples-*.test.ts file (by the time they take: README.md and auth.md alone take the longest). */
export const DOC_PAGE_GROUPS = {
  readme: ['README.md'],
  auth: ['docs/auth.md'],
  rest: ['docs/endpoints.md', 'docs/list-queries.md', 'docs/cursors.md'],
  'rest-writes': ['docs/conditional-requests.md', 'docs/idempotency.md', 'docs/errors.md'],
  'graphql-events': ['docs/graphql.md', 'docs/events.md'],
} as const;

/** The pages of a group; 'other' is every page with examples that no group names. */
function pagesOf(group: keyof typeof DOC_PAGE_GROUPS | 'other'): typeof pages {
  const named: readonly string[] = group === 'other' ? Object.values(DOC_PAGE_GROUPS).flat() : DOC_PAGE_GROUPS[group];
  // A page renamed or left without examples must not take its group's tests away unseen.
  const missing = named.filter((path) => !allPages.some((page) => page.path === path));
  if (missing.length > 0) throw new Error(`DOC_PAGE_GROUPS names pages without console examples: ${missing.join(', ')}`);
  return pages.filter((page) => (group === 'other' ? !named.includes(page.path) : named.includes(page.path)));
}

/** The tests of a group's pages: they run at once, each in its own folder, shell, server and ports; a page's examples in order. */
export function describeDocPages(group: keyof typeof DOC_PAGE_GROUPS | 'other'): void {
  describe.skipIf(TEST_DIALECT !== 'sqlite').concurrent('the examples of README.md and docs/ (on SQLite: they show the default database)', () => {
    const groupPages = pagesOf(group);
    // DOCS_EXAMPLES_PAGES may leave a group without pages: a file without tests would fail.
    if (groupPages.length === 0) it.skip(`no page of this group is in DOCS_EXAMPLES_PAGES=${process.env.DOCS_EXAMPLES_PAGES ?? ''}`, () => undefined);
    for (const page of groupPages) {
      it(`${page.path}: ${page.blocks.reduce((sum, block) => sum + block.commands.length, 0)} commands`, { timeout: 180_000 }, async () => {
        const failures = await runPage(page);
        // The first mismatch, and how many more (later ones often follow from it).
        if (failures.length > 0) expect.fail(`${failures[0] ?? ''}${failures.length > 1 ? `\n(and ${failures.length - 1} more on this page)` : ''}`);
      });
    }
  });
}

/** Writes the outputs a run printed into a page, and the values it got into every command. */
function rewritePage(path: string, commands: DocCommand[], rewrites: { command: DocCommand; output: string }[], updated: ValueMap): void {
  const lines = readFileSync(join(ROOT, path), 'utf8').split('\n');
  for (const command of [...commands].sort((a, b) => b.line - a.line)) {
    const rewrite = rewrites.find((r) => r.command === command);
    if (rewrite) lines.splice(command.outputLine - 1, command.outputLines, ...(rewrite.output === '' ? [] : rewrite.output.split('\n')));
    const commandLines = command.command.split('\n').length;
    const rewritten = substitute(command.command, updated).split('\n').map((line, i) => (i === 0 ? `$ ${line}` : line));
    lines.splice(command.line - 1, commandLines, ...rewritten);
  }
  writeFileSync(join(ROOT, path), lines.join('\n'));
}
