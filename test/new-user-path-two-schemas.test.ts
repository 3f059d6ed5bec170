import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { bearer, createToken, firstStart, it, NOTES_SCHEMA, serve, stop, tables } from './helpers/new-user.js';
import { CLI_TEST_TIMEOUT_MS } from './helpers/cli-process.js';

/**
 * What a new user does in the first ten minutes, with the CLI in an empty folder and no settings
 * (test/helpers/new-user.ts): serve the example, then a schema of their own in the same
 * folder, make a token for each and use both.
 * (The other new-user-path-*.test.ts files: new-user-path-busy-port, new-user-path-restart, new-user-path-tokens, new-user-path-upgrade.)
 */

describe.concurrent('the new-user path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('serve the example, then another schema in the same folder; a token for each; both work', async ({ folder: dir }) => {
    const { started: example, admin: exampleAdmin, hint: exampleHint } = await firstStart(dir, []);
    // The hint fits the server: its real address, a resource of the example that needs a token.
    expect(exampleHint).toContain(`${example.base}/users`);
    expect(exampleHint).toContain('npx restgraph token create --scopes users:read,users:write');
    expect(existsSync(join(dir.path, 'data', 'example-schema.db'))).toBe(true);

    writeFileSync(join(dir.path, 'notes.yaml'), NOTES_SCHEMA);
    const { started: notes, admin: notesAdmin, hint: notesHint } = await firstStart(dir, ['notes.yaml']);
    expect(notesHint).toContain(`${notes.base}/notes`);
    expect(notesHint).toContain('npx restgraph token create notes.yaml --scopes notes:read,notes:write');
    expect(notesHint).not.toContain('users');
    expect(readdirSync(join(dir.path, 'data')).filter((f) => f.endsWith('.db')).sort()).toEqual(['example-schema.db', 'notes.db']);
    expect(tables(join(dir.path, 'data', 'notes.db'))).toEqual(['notes']);

    // A token for each, as the hints print them.
    const usersKey = await createToken(dir, ['--scopes', 'users:read,users:write']);
    const notesKey = await createToken(dir, ['notes.yaml', '--scopes', 'notes:read,notes:write']);
    // Token commands change no schema: the notes database still has only notes.
    expect(tables(join(dir.path, 'data', 'notes.db'))).toEqual(['notes']);

    const [exampleAgain, notesAgain] = await Promise.all([serve(dir, []), serve(dir, ['notes.yaml'])]);
    const posted = await fetch(`${notesAgain.base}/notes`, { method: 'POST', headers: { ...bearer(notesKey), 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello' }) });
    expect(posted.status).toBe(201);
    expect((await fetch(`${notesAgain.base}/notes`, { headers: bearer(notesKey) })).status).toBe(200);
    expect((await fetch(`${exampleAgain.base}/users`, { headers: bearer(usersKey) })).status).toBe(200);
    // Each key belongs to its own database.
    expect((await fetch(`${notesAgain.base}/notes`, { headers: bearer(usersKey) })).status).toBe(401);
    expect((await fetch(`${exampleAgain.base}/users`, { headers: bearer(notesKey) })).status).toBe(401);
    // And the first admin keys still work, each on its own server.
    expect((await fetch(`${exampleAgain.base}/v1/tokens`, { headers: bearer(exampleAdmin) })).status).toBe(200);
    expect((await fetch(`${notesAgain.base}/v1/tokens`, { headers: bearer(notesAdmin) })).status).toBe(200);
    await Promise.all([stop(exampleAgain.running), stop(notesAgain.running)]);
  });

});
