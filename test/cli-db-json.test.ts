import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, type CliFolder, freePort, itWithFolder, logLines, type Running, waitReady } from './helpers/cli-process.js';
import { ADMIN_TOKEN, run, start } from './helpers/cli-serve.js';
import { createTestDatabase, ranInSqlitePass } from './helpers/test-database.js';

/**
 * `restgraph serve db.json` and `restgraph init --from db.json` as a json-server user runs them: a
 * child process of dist/cli/main.js in a folder holding db.json, with the default database
 * (./data/db.db), requests without a token, real sockets.
 */

const it = itWithFolder('restgraph-dbjson-');
/**
 * The tests that serve the default database (./data/db.db) or SQLite files they name: the same in
 * both passes of the suite, so they run in the SQLite pass only (test-database.ts, ranInSqlitePass).
 */
const onSqliteFiles = it.skipIf(ranInSqlitePass);

/** json-server 0.17's README db.json. */
const README_0_17 = `{
  "posts": [ { "id": 1, "title": "json-server", "author": "typicode" } ],
  "comments": [ { "id": 1, "body": "some comment", "postId": 1 } ],
  "profile": { "name": "typicode" }
}
`;

/** json-server 1.x's README db.json: ids are strings of digits. */
const README_1 = `{
  "posts": [
    { "id": "1", "title": "a title", "views": 100 },
    { "id": "2", "title": "another title", "views": 200 }
  ],
  "comments": [
    { "id": "1", "text": "a comment about post 1", "postId": "1" },
    { "id": "2", "text": "another comment about post 1", "postId": "1" }
  ],
  "profile": { "name": "typicode" }
}
`;

/** `serve <args>` in the folder with the default database, on a fresh port, until /readyz answers (within `readyMs`). */
async function serveIn(dir: CliFolder, args: string[], readyMs?: number): Promise<{ running: Running; base: string }> {
  const port = await freePort();
  const running = start(dir, ['serve', ...args], { PORT: String(port), RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN });
  await waitReady(running, port, readyMs);
  return { running, base: `http://127.0.0.1:${port}` };
}

async function stop(running: Running): Promise<string[]> {
  running.child.kill('SIGTERM');
  expect(await running.exited).toEqual({ code: 0, signal: null });
  return logLines(running.stdout()).map((l) => String(l.msg));
}

/** A request without a token, as a json-server client sends it. */
async function call(base: string, path: string, method = 'GET', body?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: response.status === 204 ? undefined : await response.json() };
}

describe.concurrent('serve db.json', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  onSqliteFiles("serves json-server 0.17's README db.json without a token, and says it is public", async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), README_0_17);
    const { running, base } = await serveIn(dir, ['db.json']);
    expect(await call(base, '/posts')).toEqual({ status: 200, body: [expect.objectContaining({ id: 1, title: 'json-server', author: 'typicode' })] });
    expect(await call(base, '/posts/1')).toMatchObject({ status: 200, body: { id: 1, title: 'json-server' } });
    expect(await call(base, '/comments?postId=1')).toEqual({ status: 200, body: [expect.objectContaining({ id: 1, body: 'some comment', postId: 1 })] });
    expect(await call(base, '/profile')).toMatchObject({ status: 200, body: { name: 'typicode' } });
    expect(await call(base, '/posts', 'POST', { title: 'second', author: 'me' })).toMatchObject({ status: 201, body: { id: 2, title: 'second' } });
    expect(await call(base, '/profile', 'PATCH', { name: 'changed' })).toMatchObject({ status: 200, body: { name: 'changed' } });
    expect(await call(base, '/posts/1/comments')).toMatchObject({ status: 200, body: [{ id: 1 }] });
    const lines = await stop(running);
    expect(lines).toContain(
      'warning: db.json is served without authentication: anyone who can reach this port can read and change posts, comments, profile. Run npx restgraph init --from db.json to write a schema you can tighten.',
    );
    expect(lines.find((l) => l.startsWith('Imported db.json into'))).toMatch(/\(posts 1, comments 1, profile 1\)/);
    expect(existsSync(join(dir.path, 'data', 'db.db'))).toBe(true);
    expect(readFileSync(join(dir.path, 'db.json'), 'utf8')).toBe(README_0_17);
  });

  onSqliteFiles("serves json-server 1.x's README db.json: ids that are strings of digits are kept as integers", async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), README_1);
    const { running, base } = await serveIn(dir, ['db.json']);
    expect(await call(base, '/posts/2')).toMatchObject({ status: 200, body: { id: 2, title: 'another title', views: 200 } });
    expect(await call(base, '/comments?postId=1')).toMatchObject({ status: 200, body: [{ id: 1, postId: 1 }, { id: 2, postId: 1 }] });
    expect(await call(base, '/profile')).toMatchObject({ status: 200, body: { name: 'typicode' } });
    expect(await call(base, '/posts', 'POST', { title: 'third', views: 0 })).toMatchObject({ status: 201, body: { id: 3 } });
    expect(await call(base, '/profile', 'PUT', { name: 'replaced' })).toMatchObject({ status: 200, body: { id: 1, name: 'replaced' } });
    await stop(running);
  });

  onSqliteFiles("answers json-server's query language by default (--compat none turns it off)", async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), README_1);
    const compat = await serveIn(dir, ['db.json']);
    expect(await call(compat.base, '/posts?_sort=-views&_limit=1')).toMatchObject({ status: 200, body: [{ id: 2, views: 200 }] });
    expect(await call(compat.base, '/posts/1?_embed=comments')).toMatchObject({ status: 200, body: { id: 1, comments: [{ id: 1 }, { id: 2 }] } });
    expect(await call(compat.base, '/comments/2', 'DELETE')).toEqual({ status: 200, body: {} });
    await stop(compat.running);
    const own = await serveIn(dir, ['db.json', '--compat', 'none']);
    expect(await call(own.base, '/posts?_sort=-views')).toMatchObject({ status: 400 });
    expect(await call(own.base, '/posts?sort=-views&limit=1')).toMatchObject({ status: 200, body: [{ id: 2 }] });
    await stop(own.running);
  });

  onSqliteFiles('keeps writes across restarts, never imports over them, and warns when db.json has changed', async ({ folder: dir }) => {
    const file = join(dir.path, 'db.json');
    writeFileSync(file, README_0_17);
    const first = await serveIn(dir, ['db.json']);
    await call(first.base, '/posts', 'POST', { title: 'written', author: 'me' });
    await stop(first.running);

    const second = await serveIn(dir, ['db.json']);
    expect(((await call(second.base, '/posts')).body as unknown[]).length).toBe(2);
    const secondLines = await stop(second.running);
    expect(secondLines.some((l) => l.startsWith('Imported'))).toBe(false);
    expect(secondLines.some((l) => l.includes('has changed'))).toBe(false);

    writeFileSync(file, README_0_17.replace('"json-server"', '"edited"'));
    const third = await serveIn(dir, ['db.json']);
    expect(await call(third.base, '/posts/1')).toMatchObject({ body: { title: 'json-server' } });
    expect(((await call(third.base, '/posts')).body as unknown[]).length).toBe(2);
    const thirdLines = await stop(third.running);
    const warning = thirdLines.find((l) => l.includes('has changed')) ?? '';
    expect(warning).toMatch(/^warning: db\.json has changed since it was imported into sqlite:.*data\/db\.db on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z; serving the database as it is/);
    expect(warning).toContain('To import db.json again, stop the server, move the database away (mv ');
  });

  it("serves from the database -d names (the suite's: PostgreSQL in its pass), keeping writes and warning about a changed file", async ({ folder: dir }) => {
    const database = await createTestDatabase(dir.path);
    try {
      const file = join(dir.path, 'db.json');
      writeFileSync(file, README_1);
      const first = await serveIn(dir, ['db.json', '-d', database.url]);
      expect(await call(first.base, '/posts', 'POST', { title: 'third', views: 3 })).toMatchObject({ status: 201, body: { id: 3 } });
      expect(await call(first.base, '/profile', 'PATCH', { name: 'me' })).toMatchObject({ status: 200 });
      await stop(first.running);
      writeFileSync(file, README_1.replace('"a title"', '"edited"'));
      const second = await serveIn(dir, ['db.json', '-d', database.url]);
      expect(await call(second.base, '/posts/3')).toMatchObject({ status: 200, body: { title: 'third' } });
      expect(await call(second.base, '/profile')).toMatchObject({ body: { name: 'me' } });
      const lines = await stop(second.running);
      expect(lines.find((l) => l.includes('has changed'))).toMatch(/To import db\.json again, start with an empty database \(-d <another database>\)\.$/);
      expect(existsSync(join(dir.path, 'data'))).toBe(false);
    } finally {
      await database.drop();
    }
  });

  onSqliteFiles('writes the schema with init --from, which then serves the same data and writes; fields are optional, required with --strict', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), README_0_17);
    const served = await serveIn(dir, ['db.json']);
    await call(served.base, '/comments', 'POST', { body: 'second comment', postId: 1 });
    // A json-server front end leaves fields out: every item of db.json has an author, none is required.
    expect(await call(served.base, '/posts', 'POST', { title: 'no author' })).toMatchObject({ status: 201, body: { id: 2, title: 'no author', author: null } });
    expect(await call(served.base, '/posts/1', 'PUT', { title: 'retitled' })).toMatchObject({ status: 200, body: { id: 1, title: 'retitled', author: null } });
    await stop(served.running);

    const init = await run(dir, ['init', '--from', 'db.json']);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('Wrote db.yaml (posts, comments, profile)');
    expect(init.stdout).toContain('  npx restgraph serve db.yaml --compat json-server\n');
    const text = readFileSync(join(dir.path, 'db.yaml'), 'utf8');
    expect(text).toContain('postId: { type: integer, references: posts, onDelete: cascade }  # reference: every postId is an id of posts');
    expect(text).toContain('title: { type: string }  # string: every value is a string; optional: present in the 1 post (--strict makes it required)');
    expect(text).not.toContain('required: true');
    const strict = await run(dir, ['init', '--from', 'db.json', '--strict', '-o', 'strict.yaml']);
    expect(strict.code).toBe(0);
    const strictText = readFileSync(join(dir.path, 'strict.yaml'), 'utf8');
    expect(strictText).toContain('postId: { type: integer, required: true, references: posts, onDelete: cascade }  # reference: every postId is an id of posts');
    expect(strictText).toContain('title: { type: string, required: true }  # string: every value is a string; required: present in the 1 post');

    // Tightened: anonymous clients may read, not write.
    writeFileSync(join(dir.path, 'db.yaml'), text.replaceAll('write: public', 'write: authenticated'));
    const again = await serveIn(dir, ['db.yaml', '--compat', 'json-server']);
    expect(await call(again.base, '/comments?postId=1')).toMatchObject({ status: 200, body: [{ id: 1 }, { id: 2, body: 'second comment' }] });
    expect(await call(again.base, '/posts/2')).toMatchObject({ status: 200, body: { title: 'no author', author: null } });
    expect((await call(again.base, '/posts', 'POST', { title: 'x', author: 'y' })).status).toBe(401);
    const lines = await stop(again.running);
    expect(lines.some((l) => l.includes('without authentication'))).toBe(false);

    const refused = await run(dir, ['init', '--from', 'db.json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('db.yaml exists; restgraph init does not overwrite it. Name another file with -o, or add --force to replace it. [RG_CONFIG_INVALID]');
    expect((await run(dir, ['init', '--from', 'db.json', '-o', 'other.yaml'])).stdout).toContain('  npx restgraph serve other.yaml -d sqlite:./data/db.db --compat json-server\n');
    expect((await run(dir, ['init', '--from', 'db.json', '--force'])).code).toBe(0);
    expect((await run(dir, ['init', '--from', 'db.json', '-o', 'no/such/folder/db.yaml'])).stderr).toBe(
      'restgraph: Invalid configuration -o: cannot write no/such/folder/db.yaml (ENOENT) [RG_CONFIG_INVALID]\n',
    );
  });

  onSqliteFiles('serves a generated db.json of 100,000 posts', async ({ folder: dir }) => {
    const posts = Array.from({ length: 100_000 }, (_, i) => ({ id: i + 1, title: `post ${i + 1}`, views: i % 1000, published: i % 2 === 0, at: '2026-01-02T03:04:05Z' }));
    const comments = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, body: `comment ${i + 1}`, postId: (i % 100_000) + 1 }));
    writeFileSync(join(dir.path, 'db.json'), JSON.stringify({ posts, comments, profile: { name: 'big' } }));
    const started = performance.now();
    // Reading and importing 100,000 posts takes 7 s alone, and over 30 s in a loaded full run.
    const { running, base } = await serveIn(dir, ['db.json'], 100_000);
    const first = await call(base, '/posts/100000');
    console.log(`db.json of 100,000 posts: first answer ${((performance.now() - started) / 1000).toFixed(2)} s after the start`);
    expect(first).toMatchObject({ status: 200, body: { id: 100000, title: 'post 100000', views: 999, published: false } });
    await stop(running);
    const imported = logLines(running.stdout()).find((l) => String(l.msg).startsWith('Imported'));
    console.log(`db.json of 100,000 posts: imported in ${String(imported?.durationMs)} ms`);
    expect(imported?.msg).toContain('(posts 100000, comments 1000, profile 1)');
  }, 120_000);

  onSqliteFiles('gives string ids integer ids, keeping the originals and rewriting references; renames keys; keeps date-time timestamps', async ({ folder: dir }) => {
    const data = {
      users: [
        { id: 'ab12', 'first-name': 'Ann', createdAt: '2025-01-02T03:04:05Z' },
        { id: 'cd34', 'first-name': 'Bob', createdAt: '2025-02-03T04:05:06+01:00' },
      ],
      posts: [{ id: 7, title: 'by Bob', userId: 'cd34', sort: 3 }, { id: 9, title: 'by nobody', userId: null }],
    };
    writeFileSync(join(dir.path, 'db.json'), JSON.stringify(data));
    const { running, base } = await serveIn(dir, ['db.json']);
    expect(await call(base, '/users/2')).toMatchObject({ status: 200, body: { id: 2, originalId: 'cd34', firstName: 'Bob', createdAt: '2025-02-03T03:05:06.000Z' } });
    expect(await call(base, '/posts/7?include=user')).toMatchObject({ status: 200, body: { id: 7, userId: 2, sortValue: 3, user: { originalId: 'cd34' } } });
    expect(await call(base, '/posts/9')).toMatchObject({ status: 200, body: { userId: null } });
    expect(await call(base, '/users', 'POST', { 'firstName': 'Cy' })).toMatchObject({ status: 201, body: { id: 3, originalId: null } });
    const lines = await stop(running);
    expect(lines).toContain('warning: Names restgraph cannot take as they are were renamed: users."first-name" → users.firstName, posts."sort" → posts.sortValue (restgraph init --from db.json writes the schema with the reasons).');
  });

  onSqliteFiles('refuses a database that holds another schema, changing nothing', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), README_0_17);
    writeFileSync(join(dir.path, 'notes.yaml'), 'resources:\n  notes:\n    fields:\n      text: { type: string }\n');
    const other = await serveIn(dir, ['notes.yaml', '-d', 'sqlite:other.db']);
    await stop(other.running);
    const result = await run(dir, ['serve', 'db.json', '-d', 'sqlite:other.db']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The schema inferred from db.json makes destructive changes to the database sqlite:');
    expect(result.stderr).toContain('  - drop resource notes and every row in it\n');
    expect(result.stderr).toContain('npx restgraph serve db.json -d sqlite:./data/<new name>.db');
    const again = await serveIn(dir, ['notes.yaml', '-d', 'sqlite:other.db']);
    expect((await fetch(`${again.base}/notes`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    await stop(again.running);
  });

  onSqliteFiles('refuses to import into a database that has rows but no record of the import', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), README_0_17);
    expect((await run(dir, ['init', '--from', 'db.json'])).code).toBe(0);
    const schema = await serveIn(dir, ['db.yaml', '-d', 'sqlite:other.db']);
    expect((await call(schema.base, '/posts', 'POST', { title: 'made here', author: 'me' })).status).toBe(201);
    await stop(schema.running);
    const result = await run(dir, ['serve', 'db.json', '-d', 'sqlite:other.db']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^restgraph: The database sqlite:.*other\.db already has rows, but no record of an import from db\.json: .* Nothing was imported\. .* \[RG_DATABASE_NOT_EMPTY\]\n$/);
  });

  onSqliteFiles('refuses a file that is not JSON, with the line and column, and creates nothing', async ({ folder: dir }) => {
    writeFileSync(join(dir.path, 'db.json'), '{\n  "posts": [\n    { "id": 1, }\n  ]\n}\n');
    const result = await run(dir, ['serve', 'db.json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^restgraph: db\.json is not JSON: .* at line 3, column 16\. \[RG_DB_JSON_INVALID\]\n$/);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });

  onSqliteFiles('refuses a missing file and collections that cannot be resources, naming each problem', async ({ folder: dir }) => {
    expect((await run(dir, ['serve', 'missing.json'])).stderr).toBe('restgraph: Cannot read missing.json (ENOENT). [RG_DB_JSON_INVALID]\n');
    writeFileSync(join(dir.path, 'db.json'), JSON.stringify({ title: 'x', tags: ['a'], posts: [{ id: 1 }, { id: 1 }] }));
    const result = await run(dir, ['serve', 'db.json']);
    // As docs/errors.md shows it.
    expect(result.stderr).toBe(
      'restgraph: db.json cannot be served: [RG_DB_JSON_INVALID]\n' +
        '  "title" is a string ("x"): a top-level member must be an array (a collection) or an object (a singleton)\n' +
        '  "tags"[0] is a string ("a"): every item of a collection must be an object\n',
    );
    writeFileSync(join(dir.path, 'db.json'), JSON.stringify({ posts: [{ id: 1 }, { id: 1 }] }));
    expect((await run(dir, ['init', '--from', 'db.json'])).stderr).toContain('  "posts"[1] has the id 1 of "posts"[0]: ids must be unique within a collection\n');
    writeFileSync(join(dir.path, 'db.json'), JSON.stringify({ posts: [{ id: 1, deep: JSON.parse('['.repeat(70) + ']'.repeat(70)) as unknown }] }));
    expect((await run(dir, ['serve', 'db.json'])).stderr).toContain('restgraph: db.json: "posts"[0] nests objects and arrays more than 64 levels deep');
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });
});
