import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkResponsesAgainstOpenApi, startTestApp, tempDir } from './helpers/test-app.js';
import { ranInSqlitePass } from './helpers/test-database.js';
import { itWithFolder } from './helpers/cli-process.js';
import { run, serve, writeSchema } from './helpers/cli-serve.js';
import { BLOG_SCHEMA } from './helpers/blog-schema.js';
import { buildApp } from '../src/app/build-app.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ConfigError } from '../src/errors.js';

/**
 * The `compat` option with a schema a user writes (test/json-server-compat.test.ts compares
 * `restgraph serve db.json`, where the mode is the default, with json-server itself): its
 * configuration errors, `--compat json-server` on the CLI, the answers without it, and the largest
 * page applied to json-server's paging, and the limit of [in] in every form of filter.
 */

// Every answer of the apps built here must be what their OpenAPI document says.
checkResponsesAgainstOpenApi();

const dir = tempDir('restgraph-compat-option-');
afterAll(() => {
  dir.cleanup();
});

describe('the compat option', () => {
  const cli = itWithFolder('restgraph-compat-cli-');

  it('an unknown mode is a configuration error at start, naming the option (buildApp, RESTGRAPH_COMPAT)', async () => {
    await expect(buildApp({ databaseUrl: 'sqlite::memory:', compat: 'jsonserver' as 'json-server' })).rejects.toThrow(
      'Invalid configuration compat: "jsonserver" is not a compatibility mode; the modes are: json-server',
    );
    expect(() => optionsFromEnv({ RESTGRAPH_COMPAT: 'json' })).toThrow(ConfigError);
    expect(optionsFromEnv({ RESTGRAPH_COMPAT: 'json-server' }).compat).toBe('json-server');
    expect(optionsFromEnv({}).compat).toBeUndefined();
  });

  // On SQLite files of its own: the same in both passes, so in the SQLite pass only.
  cli.skipIf(ranInSqlitePass)('restgraph serve --compat json-server takes json-server parameters; --compat with another mode exits 1 naming the flag', async ({ folder }) => {
    const schema = writeSchema(folder, BLOG_SCHEMA, 'db-schema.yaml');
    const bad = await run(folder, ['serve', schema, '--compat', 'jsonserver'], { DATABASE_URL: `sqlite:${join(folder.path, 'bad.db')}` });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('restgraph: Invalid configuration --compat: "jsonserver" is not a compatibility mode; the modes are: json-server');
    expect(bad.stderr).toContain('[RG_CONFIG_INVALID]');
    const { base } = await serve(folder, [schema, '--compat', 'json-server']);
    for (const title of ['b', 'a']) await globalThis.fetch(`${base}/posts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
    const sorted = await globalThis.fetch(`${base}/posts?_sort=title&_limit=1`);
    expect(sorted.headers.get('x-total-count')).toBe('2');
    expect(await sorted.json()).toMatchObject([{ id: 2, title: 'a' }]);
    expect((await globalThis.fetch(`${base}/posts/1`, { method: 'DELETE' })).status).toBe(200);
  });

  it('without it, json-server parameters are unknown filters (400) and DELETE answers 204', async () => {
    const file = join(dir.path, 'native.yaml');
    writeFileSync(file, BLOG_SCHEMA);
    const native = await startTestApp({ schema: file });
    try {
      await native.app.inject({ method: 'POST', url: '/posts', payload: { title: 'x' } });
      expect((await native.app.inject({ method: 'GET', url: '/posts?_sort=title' })).statusCode).toBe(400);
      expect((await native.app.inject({ method: 'POST', url: '/posts/1/comments', payload: { text: 'x' } })).statusCode).toBe(405);
      expect((await native.app.inject({ method: 'DELETE', url: '/posts/1' })).statusCode).toBe(204);
    } finally {
      await native.close();
    }
  });

  it('a list without json-server paging is cut to the largest page, with restgraph\'s Link rel="next" to the rest', async () => {
    const file = join(dir.path, 'small.yaml');
    writeFileSync(file, BLOG_SCHEMA);
    const small = await startTestApp({ schema: file, compat: 'json-server', listLimits: { maxLimit: 5, defaultLimit: 5 } });
    try {
      for (let i = 1; i <= 7; i++) await small.app.inject({ method: 'POST', url: '/posts', payload: { title: `p${i}`, views: 10 - i } });
      const first = await small.app.inject({ method: 'GET', url: '/posts?_sort=views' });
      expect(first.json<{ id: number }[]>().map((p) => p.id)).toEqual([7, 6, 5, 4, 3]);
      const next = /<https?:\/\/[^/]+([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
      expect(next).toBeDefined();
      expect((await small.app.inject({ method: 'GET', url: next ?? '' })).json<{ id: number }[]>().map((p) => p.id)).toEqual([2, 1]);
      const huge = await small.app.inject({ method: 'GET', url: '/posts?_limit=100000' });
      expect(huge.json<unknown[]>()).toHaveLength(5);
      expect(huge.headers['x-total-count']).toBe('7');
      const envelope = await small.app.inject({ method: 'GET', url: '/posts?_page=1&_per_page=100' });
      expect(envelope.json()).toMatchObject({ first: 1, prev: null, next: 2, last: 2, pages: 2, items: 7 });
    } finally {
      await small.close();
    }
  });

  it('the values of one filter are held to the limit of [in] (100) in every form: id[in], id:in, a repeated id and each _where operand', async () => {
    const file = join(dir.path, 'in-limit.yaml');
    writeFileSync(file, BLOG_SCHEMA);
    const t = await startTestApp({ schema: file, compat: 'json-server' });
    try {
      const ids = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
      const refused = async (url: string, parameter: string, n: number): Promise<void> => {
        const response = await t.app.inject({ method: 'GET', url });
        expect(response.statusCode, url.slice(0, 80)).toBe(400);
        expect(response.json(), url.slice(0, 80)).toMatchObject({ code: 'invalid-query', errors: [{ parameter, detail: `has ${n} values; at most 100 are allowed` }] });
      };
      const where = (value: unknown): string => `/posts?_where=${encodeURI(JSON.stringify(value))}`;
      await refused(`/posts?id[in]=${ids(1500).join(',')}`, 'id[in]', 1500);
      await refused(`/posts?id:in=${ids(1500).join(',')}`, 'id:in', 1500);
      await refused(`/posts?${ids(101).map((i) => `id=${i}`).join('&')}`, 'id', 101);
      await refused(where({ id: { in: ids(1500) } }), '_where', 1500);
      await refused(where({ or: [{ views: { in: ids(101) } }] }), '_where', 101);
      await refused(where({ id: ids(1500) }), '_where', 1500);
      await refused(where({ title: { contains: ids(101).map(String) } }), '_where', 101);
      for (const url of [`/posts?id[in]=${ids(100).join(',')}`, where({ id: { in: ids(100) } }), where({ id: { ne: ids(100) } })]) {
        expect((await t.app.inject({ method: 'GET', url })).statusCode, url.slice(0, 80)).toBe(200);
      }
    } finally {
      await t.close();
    }
  });
});
