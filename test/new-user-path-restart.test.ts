import { describe, expect } from 'vitest';
import { adminKeyIn, it, KEY_FORMAT, messages, run, serve, stop } from './helpers/new-user.js';
import { CLI_TEST_TIMEOUT_MS } from './helpers/cli-process.js';

/**
 * What a new user does in the first ten minutes, with the CLI in an empty folder and no settings
 * (test/helpers/new-user.ts): a restart: no new key, and a hint when the
 * database has no admin key.
 * (The other new-user-path-*.test.ts files: new-user-path-busy-port, new-user-path-tokens, new-user-path-two-schemas, new-user-path-upgrade.)
 */

describe.concurrent('the new-user path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a restart makes no new key; a database without an admin key says how to make one', async ({ folder: dir }) => {
    const first = await serve(dir, []);
    const admin = adminKeyIn(await stop(first.running)) ?? '';
    expect(admin).toMatch(KEY_FORMAT);

    const second = await serve(dir, []);
    const secondOut = await stop(second.running);
    expect(secondOut).not.toContain(admin);
    expect(adminKeyIn(secondOut)).toBeUndefined();
    expect(messages(secondOut)).toContain(`restgraph listening on ${second.base}`);

    // Without an admin-capable key, every start says how to make one.
    expect((await run(dir, ['token', 'revoke', admin.slice(0, 11)])).code).toBe(0);
    const third = await serve(dir, []);
    const thirdOut = await stop(third.running);
    expect(adminKeyIn(thirdOut)).toBeUndefined();
    expect(messages(thirdOut).join('\n')).toContain('npx restgraph token create --scopes admin');
  });
});
