import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { adminKeyIn, it, KEY_FORMAT, run, serve, stop } from './helpers/new-user.js';
import { CLI_TEST_TIMEOUT_MS } from './helpers/cli-process.js';

/**
 * What a new user does in the first ten minutes, with the CLI in an empty folder and no settings
 * (test/helpers/new-user.ts): a port that is taken.
 * (The other new-user-path-*.test.ts files: new-user-path-restart, new-user-path-tokens, new-user-path-two-schemas, new-user-path-upgrade.)
 */

describe.concurrent('the new-user path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a busy port: one line with a code and the fix, nothing created; the next start on a free port prints the key', async ({ folder: dir, onTestFinished }) => {
    const busy = createServer();
    onTestFinished(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)));
    const refused = await run(dir, ['serve', '-p', String(port)]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const lines = refused.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${port}`);
    expect(lines[0]).toMatch(/\[RG_[A-Z_]+\]$/);
    expect(lines[0]).toContain('-p');
    expect(lines[0]).toContain('PORT');
    expect(existsSync(join(dir.path, 'data'))).toBe(false);

    const next = await serve(dir, []);
    const out = await stop(next.running);
    expect(adminKeyIn(out)).toMatch(KEY_FORMAT);
  });
});
