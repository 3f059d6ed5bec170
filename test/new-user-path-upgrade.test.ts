import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, logLines } from './helpers/cli-process.js';
import { it, messages, NOTES_SCHEMA, run, serve, stop } from './helpers/new-user.js';

/**
 * What a new user does in the first ten minutes, with the CLI in an empty folder and no settings
 * (test/helpers/new-user.ts): an upgrade from a release that kept the example's data in
 * ./data/restgraph.db.
 * (The other new-user-path-*.test.ts files: new-user-path-busy-port, new-user-path-restart, new-user-path-tokens, new-user-path-two-schemas.)
 */

describe.concurrent('the new-user path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('upgrading: the example goes on using ./data/restgraph.db of earlier releases, saying so; another schema gets its own file, with a word about the old one', async ({ folder: dir }) => {
    expect((await run(dir, ['migrate', '-d', 'sqlite:./data/restgraph.db'])).code).toBe(0);
    const example = await serve(dir, []);
    const out = await stop(example.running);
    const notice = messages(out).find((m) => m.startsWith('Using ./data/restgraph.db')) ?? '';
    expect(notice).toContain('mv ./data/restgraph.db ./data/example-schema.db');
    expect(logLines(out).find((l) => l.msg === `restgraph listening on ${example.base}`)?.database).toBe(`sqlite:${join(dir.path, 'data', 'restgraph.db')}`);
    // The hint names the database: it is not the example's own.
    expect(messages(out).join('\n')).toContain('--scopes users:read,users:write -d sqlite:');
    expect(existsSync(join(dir.path, 'data', 'example-schema.db'))).toBe(false);

    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const notes = await serve(dir, ['notes.yaml']);
    const notesOut = await stop(notes.running);
    expect(messages(notesOut).join('\n')).toContain('npx restgraph serve notes.yaml -d sqlite:./data/restgraph.db');
    expect(existsSync(join(dir.path, 'data', 'notes.db'))).toBe(true);
  });
});
