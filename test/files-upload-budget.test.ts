import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import type { FileValue } from '../src/core/file-fields.js';
import { actAsAdmin, discardLogs, json, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT } from './helpers/test-database.js';
import { form, png } from './helpers/files.js';
import { startOfWindow } from './helpers/rate-limit-windows.js';

/**
 * The upload byte budget (docs/rate-limits.md#upload-bytes): the bytes of uploaded files counted
 * per credential (per address when anonymous) while they stream, on raw uploads and multipart
 * file parts, in memory, in the database and in Redis; past it a 429 with Retry-After and nothing
 * left in storage; a request whose budget is spent is refused before its body is read.
 */

const SCHEMA = `
resources:
  users:
    access: { read: public, write: public }
    fields:
      name: { type: string }
      notes: { type: file, maxSize: 10MB }
      attachments: { type: file, multiple: true, maxFiles: 5, maxSize: 10MB }
      archive: { type: file, maxSize: 20GB }
`;

const MiB = 1024 ** 2;

interface Problem {
  status: number;
  code: string;
  detail: string;
}

/** A client address of its own for each test, so counters in Redis never meet across tests or runs. */
const address = (): string => `10.${randomBytes(3).join('.')}`;
const anonymous = (ip: string) => ({ remoteAddress: ip, headers: { authorization: '' } });

describe('the upload byte budget', () => {
  const dir = tempDir('restgraph-upload-budget-');
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });
  afterAll(() => dir.cleanup());

  /** Instances over one database (and one file directory), with these rate-limit options. */
  const instances = async (count: number, rateLimits: Record<string, string>): Promise<{ apps: FastifyInstance[]; files: string }> => {
    const name = `budget-${randomBytes(3).toString('hex')}`;
    const db = await createTestDatabase(dir.path, name);
    closing.push(() => db.drop());
    const files = join(dir.path, `${name}-files`);
    const apps: FastifyInstance[] = [];
    for (let i = 0; i < count; i++) {
      const app = actAsAdmin(await buildApp({ databaseUrl: db.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, schema: parseSchemaText(SCHEMA), files: { dir: files }, rateLimits }));
      closing.unshift(() => app.close());
      apps.push(app);
    }
    return { apps, files };
  };
  const stored = (files: string): string[] =>
    readdirSync(files)
      .filter((shard) => shard !== 'tmp')
      .flatMap((shard) => readdirSync(join(files, shard)));
  const temporary = (files: string): string[] => (existsSync(join(files, 'tmp')) ? readdirSync(join(files, 'tmp')) : []);
  const newUser = async (app: FastifyInstance): Promise<number> => json<{ id: number }>(await app.inject({ method: 'POST', url: '/users', payload: { name: 'ann' } })).id;
  /** A raw upload streamed without a Content-Length (so only counting while it streams can stop it). */
  const streamed = (app: FastifyInstance, url: string, bytes: number, extra: { remoteAddress?: string; headers?: Record<string, string> } = {}) =>
    app.inject({ method: 'PUT', url, payload: Readable.from(chunks(bytes)), ...extra, headers: { 'content-type': 'application/octet-stream', ...extra.headers } });

  it('counts raw uploads while they stream: past the budget a 429 with Retry-After, the partial file removed, the field unchanged; refused bytes are not counted', async () => {
    await startOfWindow(3600, 30_000);
    const { apps: [app], files } = await instances(1, { uploadBytes: '2MB/1h' });
    if (app === undefined) throw new Error('no app');
    const id = await newUser(app);
    const first = await streamed(app, `/users/${id}/notes`, 1.5 * MiB);
    expect(first.statusCode, first.body).toBe(200);
    const kept = json<{ notes: FileValue }>(first).notes;

    // 1.5 MiB + 1 MiB is past 2 MiB: refused while streaming, at the first MiB counted.
    const refused = await streamed(app, `/users/${id}/notes`, MiB);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-policy']).toBe(`"uploadBytes";q=${2 * MiB};w=3600`);
    expect(json<Problem>(refused)).toMatchObject({ status: 429, code: 'rate-limited' });
    expect(json<Problem>(refused).detail).toContain('The upload quota "uploadBytes"');
    expect(stored(files)).toHaveLength(1);
    expect(temporary(files)).toEqual([]);
    expect(json<{ notes: FileValue }>(await app.inject({ method: 'GET', url: `/users/${id}` })).notes).toEqual(kept);

    // The refused MiB was not counted: 0.4 MiB more still fits.
    expect((await streamed(app, `/users/${id}/notes`, 0.4 * MiB)).statusCode).toBe(200);
    // A declared length past what is left is refused before the body is read.
    const declared = await app.inject({ method: 'PUT', url: `/users/${id}/notes`, payload: randomBytes(0.2 * MiB), headers: { 'content-type': 'application/octet-stream' } });
    expect(declared.statusCode).toBe(429);
    expect(json<Problem>(declared).detail).toMatch(/is used up but for \d+ bytes/);
  });

  it('a request whose budget is spent is refused before its body is read (a body that never ends gets its answer); multipart forms too, with no row made', async () => {
    await startOfWindow(3600, 30_000);
    const { apps: [app], files } = await instances(1, { uploadBytes: '1MB/1h' });
    if (app === undefined) throw new Error('no app');
    const id = await newUser(app);
    expect((await streamed(app, `/users/${id}/notes`, MiB)).statusCode).toBe(200);

    // A body that is never ended: had the server read it, no answer would come.
    const open = new PassThrough();
    open.write('hello');
    const refused = await app.inject({ method: 'PUT', url: `/users/${id}/notes`, payload: open, headers: { 'content-type': 'text/plain' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers.connection).toBe('close');
    open.destroy();

    const body = form([{ name: 'name', value: 'bob' }, { name: 'attachments', file: png(100), filename: 'a.png', type: 'image/png' }]);
    const multipart = await app.inject({ method: 'POST', url: '/users', ...body });
    expect(multipart.statusCode).toBe(429);
    const users = json<{ id: number }[]>(await app.inject({ method: 'GET', url: '/users' }));
    expect(users.map((u) => u.id)).toEqual([id]);
    expect(stored(files)).toHaveLength(1);
  });

  it('counts multipart file parts together: the part that passes the budget fails the form, its files removed and no row made', async () => {
    await startOfWindow(3600, 30_000);
    const { apps: [app], files } = await instances(1, { uploadBytes: '1MB/1h' });
    if (app === undefined) throw new Error('no app');
    const parts = [0, 1, 2].map((i) => ({ name: 'attachments', file: png(0.4 * MiB), filename: `${i}.png`, type: 'image/png' }));
    const refused = await app.inject({ method: 'POST', url: '/users', ...form([{ name: 'name', value: 'bob' }, ...parts]) });
    expect(refused.statusCode, refused.body).toBe(429);
    expect(json<{ id: number }[]>(await app.inject({ method: 'GET', url: '/users' }))).toEqual([]);
    expect(stored(files)).toEqual([]);
    expect(temporary(files)).toEqual([]);
    // The two files received count (they were streamed, then removed with the form); the third,
    // refused, does not: 0.2 MiB are left, and a form with a 0.1 MiB file fits.
    expect(json<Problem>(refused).detail).toMatch(/is used up but for \d+ bytes/);
    const small = { name: 'attachments', file: png(0.1 * MiB), filename: 'small.png', type: 'image/png' };
    const accepted = await app.inject({ method: 'POST', url: '/users', ...form([{ name: 'name', value: 'bob' }, small]) });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(json<{ attachments: FileValue[] }>(accepted).attachments).toHaveLength(1);
    expect((await app.inject({ method: 'POST', url: '/users', ...form([small]) })).statusCode).toBe(429);
  });

  it('is per credential: a spent key leaves another key and anonymous clients (per address) their own budgets', async () => {
    await startOfWindow(3600, 30_000);
    const { apps: [app] } = await instances(1, { uploadBytes: '1MB/1h' });
    if (app === undefined) throw new Error('no app');
    const id = await newUser(app);
    const key = json<{ key: string }>(await app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'other', scopes: ['admin'] } })).key;
    expect((await streamed(app, `/users/${id}/notes`, MiB)).statusCode).toBe(200);
    expect((await streamed(app, `/users/${id}/notes`, 10)).statusCode).toBe(429);
    expect((await streamed(app, `/users/${id}/notes`, MiB, { headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    const [ann, bob] = [address(), address()];
    expect((await streamed(app, `/users/${id}/notes`, MiB, anonymous(ann))).statusCode).toBe(200);
    expect((await streamed(app, `/users/${id}/notes`, 10, anonymous(ann))).statusCode).toBe(429);
    expect((await streamed(app, `/users/${id}/notes`, 10, anonymous(bob))).statusCode).toBe(200);
  });

  const shared: [string, Record<string, string>, boolean][] = [
    ['the database (the default on PostgreSQL once a quota is set)', TEST_DIALECT === 'postgres' ? {} : { store: 'database' }, true],
    ['Redis', { redisUrl: 'redis://127.0.0.1:6379' }, true],
    ['memory, each instance alone', { store: 'memory' }, false],
  ];
  it.each(shared)('in %s: instances count one budget together', async (_store, options, together) => {
    await startOfWindow(3600, 30_000);
    const { apps: [a, b] } = await instances(2, { uploadBytes: '1MB/1h', ...options });
    if (a === undefined || b === undefined) throw new Error('no app');
    const id = await newUser(a);
    const ip = address();
    expect((await streamed(a, `/users/${id}/notes`, 0.75 * MiB, anonymous(ip))).statusCode).toBe(200);
    expect((await streamed(b, `/users/${id}/notes`, 0.5 * MiB, anonymous(ip))).statusCode).toBe(together ? 429 : 200);
  });

  it('has a default of 10GB/1h for schemas with file fields; RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES sets it or turns it off, and a malformed one is refused naming it', async () => {
    expect(optionsFromEnv({ RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES: '500MB/1m' }).rateLimits?.uploadBytes).toBe('500MB/1m');
    expect(optionsFromEnv({ RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES: 'off' }).rateLimits?.uploadBytes).toBe('off');
    expect(() => optionsFromEnv({ RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES: '10 apples/1h' })).toThrow(/RESTGRAPH_RATE_LIMIT_UPLOAD_BYTES: must be "<size>\/<window>"/);
    const { apps: [app] } = await instances(1, {});
    if (app === undefined) throw new Error('no app');
    const id = await newUser(app);
    // An 11 GiB file fits the field's 20GB, not the default budget: refused before a byte is read.
    const declared = await app.inject({ method: 'PUT', url: `/users/${id}/archive`, payload: 'x', headers: { 'content-type': 'text/plain', 'content-length': String(11 * 1024 ** 3) } });
    expect(declared.statusCode).toBe(429);
    expect(declared.headers['ratelimit-policy']).toBe(`"uploadBytes";q=${10 * 1024 ** 3};w=3600`);
    const off = await instances(1, { uploadBytes: 'off' });
    expect((await streamed(off.apps[0] as FastifyInstance, `/users/${await newUser(off.apps[0] as FastifyInstance)}/notes`, 10)).statusCode).toBe(200);
  });
});

/** `bytes` random bytes in chunks of 64 KiB. */
function* chunks(bytes: number): Generator<Buffer> {
  for (let left = Math.floor(bytes); left > 0; left -= 64 * 1024) yield randomBytes(Math.min(left, 64 * 1024));
}
