import { connect } from 'node:net';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI, CLI_TEST_TIMEOUT_MS, freePort, itWithFolder, logLines, startCli, startProcess, waitReady, type CliFolder, type Running } from './helpers/cli-process.js';
import { ROOT } from './helpers/cli-serve.js';
import { ranInSqlitePass } from './helpers/test-database.js';

/**
 * The two forms of `restgraph serve`'s log: readable lines and a start banner when standard
 * output is a terminal (run here under a pseudo-terminal, with util-linux's `script`), JSON lines
 * otherwise, and RESTGRAPH_LOG_FORMAT choosing either way. Only the tests' own SQLite files are
 * used: these run in the SQLite pass.
 */

const it = itWithFolder('restgraph-log-format-');

const ESC = '\u001b';
const KEY = /rg_[A-Za-z0-9_-]{43}/g;
/** A readable access line: `[08:49:22.668] INFO: GET /users 200 1.4ms`. */
const accessLine = (method: string, path: string, status: number): RegExp =>
  new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO: ${method} ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ${status} \\d+(\\.\\d)?ms$`, 'm');

/** `restgraph serve` on its own SQLite file, under a pseudo-terminal when `terminal`; its output with line ends as written by the program. */
async function serveIn(dir: CliFolder, terminal: boolean, env: Record<string, string> = {}): Promise<{ running: Running; base: string; output: () => string }> {
  const port = await freePort();
  const serveEnv = { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(port), ...env };
  const running = terminal
    ? // `script` runs the command with a pseudo-terminal as its standard output, and copies what it writes there to ours (with CRLF line ends).
      startProcess('script', ['-qfc', `"${process.execPath}" "${CLI}" serve`, '/dev/null'], dir.path, serveEnv, dir.children)
    : startCli(dir.path, ['serve'], serveEnv, dir.children);
  await waitReady(running, port);
  return { running, base: `http://127.0.0.1:${port}`, output: () => running.stdout().replace(/\r\n/g, '\n') };
}

/** Waits until the output has a line matching `pattern` (lines go out within a second at most). */
async function waitForLine(output: () => string, pattern: RegExp): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const match = pattern.exec(output());
    if (match) return match[0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no line matching ${pattern} in:\n${output()}`);
}

/** Sends raw bytes as a request and resolves to the status line of the answer. */
function rawRequest(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

describe.concurrent('the log on a terminal and elsewhere', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it.skipIf(ranInSqlitePass)('on a terminal: a banner with the address, console and docs, the first admin key in a box, and one readable line per request', async ({ folder: dir }) => {
    const { base, output } = await serveIn(dir, true, { NO_COLOR: '1' });
    await waitForLine(output, /^Press Ctrl\+C to stop\.$/m);
    expect(output()).toContain(
      [`restgraph listening on ${base}`, `  Admin console  ${base}/admin`, `  API docs       ${base}/docs`, `  Database       sqlite:${join(dir.path, 'x.db')}`, '  Resources      users, posts, products, orders', 'Press Ctrl+C to stop.'].join('\n'),
    );
    // The key, in its box, with one sentence on keeping it; nowhere else.
    const keys = output().match(KEY) ?? [];
    expect(keys).toHaveLength(1);
    const key = keys[0] ?? '';
    expect(output()).toMatch(new RegExp(`^┌─+┐\\n│ First admin API key \\(shown only this once\\): +│\\n│ +│\\n│ ${key} +│\\n│ +│\\n│ Copy it into a password manager now: only its hash is stored\\. │\\n└─+┘\\n`, 'm'));
    expect(output()).toContain(`Use it as: curl -H "Authorization: Bearer <the key>" ${base}/users;`);
    // Nothing for machines on the terminal, no colours with NO_COLOR.
    expect(output()).not.toMatch(/^\{"level"/m);
    expect(output()).not.toContain(ESC);

    expect((await fetch(`${base}/users`)).status).toBe(401);
    expect((await fetch(`${base}/users`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await waitForLine(output, accessLine('GET', '/users', 401));
    await waitForLine(output, accessLine('GET', '/users', 200));
  });

  it.skipIf(ranInSqlitePass)('without a terminal: JSON lines as always, the first admin key in two warnings, no banner', async ({ folder: dir }) => {
    const { base, output } = await serveIn(dir, false);
    expect((await fetch(`${base}/users`)).status).toBe(401);
    await waitForLine(output, /"url":"\/users"/);
    const lines = logLines(output());
    const key = String(lines.find((line) => line.adminKey !== undefined)?.adminKey);
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      `Created the first admin API key (shown only this once): ${key}`,
      expect.stringMatching(new RegExp(`^Use it as: curl -H "Authorization: Bearer ${key}" ${base}/users;`)),
    ]);
    expect(lines).toContainEqual(expect.objectContaining({ level: 30, address: base, msg: `restgraph listening on ${base}`, resources: ['users', 'posts', 'products', 'orders'], versions: ['v1'] }));
    expect(lines).toContainEqual(expect.objectContaining({ level: 30, method: 'GET', url: '/users', statusCode: 401, msg: 'request' }));
    expect(output()).not.toContain('Press Ctrl+C');
  });

  it.skipIf(ranInSqlitePass)('RESTGRAPH_LOG_FORMAT=json on a terminal writes JSON lines; =pretty without one writes readable lines (without colours)', async ({ folder: dir }) => {
    const json = await serveIn(dir, true, { RESTGRAPH_LOG_FORMAT: 'json', DATABASE_URL: `sqlite:${join(dir.path, 'json.db')}` });
    const pretty = await serveIn(dir, false, { RESTGRAPH_LOG_FORMAT: 'pretty', DATABASE_URL: `sqlite:${join(dir.path, 'pretty.db')}` });
    expect((await fetch(`${json.base}/users`)).status).toBe(401);
    expect((await fetch(`${pretty.base}/users`)).status).toBe(401);

    await waitForLine(json.output, /"url":"\/users"/);
    expect(logLines(json.output())).toContainEqual(expect.objectContaining({ method: 'GET', url: '/users', statusCode: 401, msg: 'request' }));

    await waitForLine(pretty.output, accessLine('GET', '/users', 401));
    expect(pretty.output()).toContain(`restgraph listening on ${pretty.base}\n  Admin console  ${pretty.base}/admin\n`);
    expect(pretty.output()).not.toMatch(/^\{"level"/m);
    expect(pretty.output()).not.toContain(ESC);
  });

  it.skipIf(ranInSqlitePass)('on a terminal, with colours, nothing a client or a file name holds can act on the terminal: control characters are shown escaped', async ({ folder: dir }) => {
    // A schema file whose name holds an escape sequence: it shows in the database's name.
    const schema = join(dir.path, `evil${ESC}[2J${ESC}]0;owned\u0007.yaml`);
    copyFileSync(join(ROOT, 'examples', 'example-schema.yaml'), schema);
    const { base, output } = await serveIn(dir, true, { RESTGRAPH_SCHEMA: schema, DATABASE_URL: '' });
    await waitForLine(output, /^Press Ctrl\+C to stop\.$/m);
    // A path with an ESC byte (Node refuses it: 400), and one with it percent-encoded (logged as sent).
    const port = Number(new URL(base).port);
    expect(await rawRequest(port, Buffer.from(`GET /users/${ESC}[31mred HTTP/1.1\r\nHost: x\r\n\r\n`, 'latin1'))).toBe('HTTP/1.1 400 Bad Request');
    expect((await fetch(`${base}/users/%1B[31m`)).status).toBe(404);
    const line = await waitForLine(output, /^.*GET \/users\/%1B\[31m.*$/m);

    // Colours are on (the terminal is one, NO_COLOR unset) ...
    expect(line).toContain(`${ESC}[36m`);
    // ... and every ESC written is the start of a colour (SGR) sequence of ours.
    // eslint-disable-next-line no-control-regex -- control characters are what this looks for
    expect(output().replace(/\u001b\[\d+(;\d+)*m/g, '')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(output()).toContain(`evil\\x1b[2J\\x1b]0;owned\\x07.db`);
  });

  it.skipIf(ranInSqlitePass)('credentials in a URL are never written, in either form', async ({ folder: dir }) => {
    const json = await serveIn(dir, false, { DATABASE_URL: `sqlite:${join(dir.path, 'json.db')}` });
    const pretty = await serveIn(dir, true, { NO_COLOR: '1', DATABASE_URL: `sqlite:${join(dir.path, 'pretty.db')}` });
    for (const base of [json.base, pretty.base]) {
      await fetch(`${base}/v1/auth/verify-email?token=s3cret-link-token&next=/home`);
      await fetch(`${base}/users?api_key=s3cret-key`);
    }
    await waitForLine(json.output, /api_key=\[redacted\]/);
    await waitForLine(pretty.output, accessLine('GET', '/users?api_key=[redacted]', 400));
    await waitForLine(pretty.output, /verify-email\?token=\[redacted\]&next=\/home/);
    expect(logLines(json.output())).toContainEqual(expect.objectContaining({ url: '/v1/auth/verify-email?token=[redacted]&next=/home', msg: 'request' }));
    for (const output of [json.output(), pretty.output()]) expect(output).not.toContain('s3cret');
  });
});
