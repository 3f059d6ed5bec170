import { describe, expect } from 'vitest';
import { itWithFolder } from './helpers/cli-process.js';
import { run } from './helpers/cli-serve.js';

/**
 * The `restgraph` CLI as operators run it: a child process of dist/cli/main.js, on real temp
 * SQLite files and real sockets on 127.0.0.1.
 * `--help`, `--version` and mistyped commands.
 * (The other cli-*.test.ts files: cli-serve, cli-serve-signals, cli-serve-errors, cli-migrate.)
 */

// Each test has its own folder (and processes): the tests run concurrently, most of a test being a
// child process starting or stopping.
const it = itWithFolder('restgraph-cli-');

describe.concurrent('--help', () => {
  it('restgraph --help lists the commands and exits 0', async ({ folder: dir }) => {
    const result = await run(dir, ['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph [options] [command]');
    expect(result.stdout).toMatch(/^\s+serve \[options\] \[schema-file\]/m);
    expect(result.stdout).toMatch(/^\s+migrate \[options\] \[schema-file\]/m);
    expect(result.stderr).toBe('');
  });

  it('restgraph serve --help shows its usage, flags and environment, and exits 0', async ({ folder: dir }) => {
    const result = await run(dir, ['serve', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph serve [options] [schema-file]');
    for (const flag of ['-p, --port <port>', '-H, --host <host>', '-d, --database-url <url>', '--compat <mode>']) expect(result.stdout).toContain(flag);
    expect(result.stdout).toContain('Environment: PORT, HOST, DATABASE_URL, RESTGRAPH_SCHEMA');
  });

  it('restgraph migrate --help shows its usage and flags, and exits 0', async ({ folder: dir }) => {
    const result = await run(dir, ['migrate', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph migrate [options] [schema-file]');
    for (const flag of ['--dry-run', '--allow-destructive', '-d, --database-url <url>']) expect(result.stdout).toContain(flag);
  });

  it('restgraph help serve is the same as serve --help', async ({ folder: dir }) => {
    const result = await run(dir, ['help', 'serve']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: restgraph serve [options] [schema-file]');
  });

  it('--version prints the package version', async ({ folder: dir }) => {
    const result = await run(dir, ['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('0.1.0');
  });

  it('an unknown command exits 1 with a hint', async ({ folder: dir }) => {
    const result = await run(dir, ['server']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unknown command 'server'");
  });

  it('a bad --port exits 1 naming the flag', async ({ folder: dir }) => {
    const result = await run(dir, ['serve', '--port', 'abc']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('must be a port number from 0 to 65535');
    expect(result.stderr).toContain('--port');
  });
});
