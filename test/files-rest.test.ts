import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { compileErrors, validate } from '@readme/openapi-parser';
import { checkResponsesAgainstOpenApi, json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { filesIn, keyOf, type FileValue } from '../src/core/file-fields.js';
import { png } from './helpers/files.js';

/**
 * File fields over REST (docs/files.md): upload, download (ranges, validators, safe headers),
 * replace, clear and delete, each checked on the storage directory, on the suite's database.
 */

// Every answer conforms to /openapi.json: the file routes' binary bodies and their problems included.
checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string }
      avatar: { type: file, maxSize: 64KB, accept: [image/png, image/jpeg] }
      attachments: { type: file, multiple: true, maxFiles: 2, maxSize: 1MB }
      notes: { type: file }
`;

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

type User = { id: number; name: string | null; avatar: FileValue | null; attachments: FileValue[] | null; notes: FileValue | null };

describe('file fields over REST', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  /** Keys of the files in storage. */
  const stored = (): string[] =>
    readdirSync(dir.path)
      .filter((shard) => shard !== 'tmp')
      .flatMap((shard) => readdirSync(join(dir.path, shard)));
  const storedPath = (file: FileValue): string => {
    const key = keyOf(file) ?? '';
    return join(dir.path, key.slice(0, 2), key);
  };
  const newUser = async (): Promise<number> => json<User>(await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'ann' } })).id;
  const upload = (url: string, body: Buffer | string, headers: Record<string, string> = {}, method: 'PUT' | 'POST' = 'PUT') =>
    t.app.inject({ method, url, payload: body, headers: { 'content-type': 'application/octet-stream', ...headers } });

  beforeAll(async () => {
    dir = tempDir('restgraph-files-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('uploads raw bytes and downloads them byte-identical, with the headers of a safe download', async () => {
    const id = await newUser();
    const bytes = png(20_000);
    const put = await upload(`/users/${id}/avatar?name=me.png`, bytes, { 'content-type': 'image/png' });
    expect(put.statusCode, put.body).toBe(200);
    const user = json<User>(put);
    expect(user.avatar).toEqual({ name: 'me.png', type: 'image/png', size: bytes.length, url: `/users/${id}/avatar`, etag: expect.stringMatching(/^"[A-Za-z0-9_-]{22}"$/) as unknown });
    expect(existsSync(storedPath(user.avatar as FileValue))).toBe(true);
    // The row holds the value: a GET of the record shows it as the upload answered.
    expect(json<User>(await t.app.inject({ url: `/users/${id}` })).avatar).toEqual(user.avatar);

    const get = await t.app.inject({ url: `/users/${id}/avatar` });
    expect(get.statusCode).toBe(200);
    expect(sha256(get.rawPayload)).toBe(sha256(bytes));
    expect(get.headers['content-type']).toBe('image/png');
    expect(get.headers['content-length']).toBe(String(bytes.length));
    expect(get.headers.etag).toBe(user.avatar?.etag);
    expect(new Date(String(get.headers['last-modified'])).getTime()).not.toBeNaN();
    expect(get.headers['accept-ranges']).toBe('bytes');
    expect(get.headers['x-content-type-options']).toBe('nosniff');
    expect(get.headers['content-security-policy']).toContain('sandbox');
    expect(get.headers['content-disposition']).toBe(`inline; filename="me.png"; filename*=UTF-8''me.png`);

    const notModified = await t.app.inject({ url: `/users/${id}/avatar`, headers: { 'if-none-match': user.avatar?.etag ?? '' } });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.rawPayload.length).toBe(0);
  });

  it('answers a byte range with 206, and a range past the end with 416', async () => {
    const id = await newUser();
    const bytes = png(5_000);
    expect((await upload(`/users/${id}/avatar`, bytes)).statusCode).toBe(200);
    const part = await t.app.inject({ url: `/users/${id}/avatar`, headers: { range: 'bytes=100-199' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${bytes.length}`);
    expect(part.headers['content-length']).toBe('100');
    expect(part.rawPayload.equals(bytes.subarray(100, 200))).toBe(true);
    const tail = await t.app.inject({ url: `/users/${id}/avatar`, headers: { range: 'bytes=-10' } });
    expect(tail.statusCode).toBe(206);
    expect(tail.rawPayload.equals(bytes.subarray(bytes.length - 10))).toBe(true);
    const past = await t.app.inject({ url: `/users/${id}/avatar`, headers: { range: `bytes=${bytes.length}-` } });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${bytes.length}`);
    expect(json<{ code: string }>(past).code).toBe('range-not-satisfiable');
  });

  it('tells the type from the bytes: a text file claiming image/png is refused with 415, and nothing is stored', async () => {
    const id = await newUser();
    const before = new Set(stored());
    const response = await upload(`/users/${id}/avatar`, '<html><script>alert(1)</script></html>', { 'content-type': 'image/png' });
    expect(response.statusCode).toBe(415);
    expect(json<{ code: string; detail: string }>(response)).toMatchObject({ code: 'unsupported-media-type', detail: expect.stringContaining('text/plain') as unknown });
    expect(stored().filter((key) => !before.has(key))).toEqual([]);
    expect(json<User>(await t.app.inject({ url: `/users/${id}` })).avatar).toBeNull();
  });

  it('refuses a file past maxSize with 413 and leaves no partial file behind', async () => {
    const id = await newUser();
    const before = new Set(stored());
    // A stream without Content-Length: the size is only known by counting, past the limit mid-body.
    const response = await t.app.inject({ method: 'PUT', url: `/users/${id}/avatar`, payload: Readable.from([png(), randomBytes(40 * 1024), randomBytes(40 * 1024)]), headers: { 'content-type': 'image/png' } });
    expect(response.headers['content-length']).not.toBe(undefined);
    expect(response.statusCode).toBe(413);
    expect(json<{ code: string }>(response).code).toBe('payload-too-large');
    expect(stored().filter((key) => !before.has(key))).toEqual([]);
    expect(readdirSync(join(dir.path, 'tmp'))).toEqual([]);
  });

  it('serves an uploaded HTML file as an attachment that cannot run script', async () => {
    const id = await newUser();
    const put = await upload(`/users/${id}/notes?name=page.html`, '<html><script>alert(document.cookie)</script></html>', { 'content-type': 'text/html' });
    expect(put.statusCode).toBe(200);
    expect(json<User>(put).notes?.type).toBe('text/html');
    const get = await t.app.inject({ url: `/users/${id}/notes` });
    expect(get.headers['content-type']).toMatch(/^text\/html/);
    expect(get.headers['content-disposition']).toMatch(/^attachment; /);
    expect(get.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
    expect(get.headers['x-content-type-options']).toBe('nosniff');
  });

  it('replaces a file and deletes the old one after the commit', async () => {
    const id = await newUser();
    const first = json<User>(await upload(`/users/${id}/avatar`, png(10))).avatar as FileValue;
    const second = json<User>(await upload(`/users/${id}/avatar`, png(20))).avatar as FileValue;
    expect(second.etag).not.toBe(first.etag);
    await expect.poll(() => existsSync(storedPath(first))).toBe(false);
    expect(existsSync(storedPath(second))).toBe(true);
  });

  it('clears a file with DELETE or a null in a PATCH, and deletes the file', async () => {
    const id = await newUser();
    const a = json<User>(await upload(`/users/${id}/avatar`, png())).avatar as FileValue;
    const del = await t.app.inject({ method: 'DELETE', url: `/users/${id}/avatar` });
    expect(del.statusCode).toBe(204);
    expect(json<User>(await t.app.inject({ url: `/users/${id}` })).avatar).toBeNull();
    await expect.poll(() => existsSync(storedPath(a))).toBe(false);
    expect((await t.app.inject({ url: `/users/${id}/avatar` })).statusCode).toBe(404);

    const b = json<User>(await upload(`/users/${id}/avatar`, png())).avatar as FileValue;
    expect((await t.app.inject({ method: 'PATCH', url: `/users/${id}`, payload: { avatar: null } })).statusCode).toBe(200);
    await expect.poll(() => existsSync(storedPath(b))).toBe(false);
  });

  it('deletes the files of a deleted record after the commit', async () => {
    const id = await newUser();
    const a = json<User>(await upload(`/users/${id}/avatar`, png())).avatar as FileValue;
    const n = json<User>(await upload(`/users/${id}/notes`, 'hello')).notes as FileValue;
    expect((await t.app.inject({ method: 'DELETE', url: `/users/${id}` })).statusCode).toBe(204);
    await expect.poll(() => existsSync(storedPath(a)) || existsSync(storedPath(n))).toBe(false);
  });

  it('refuses a file value in a JSON body with a 422 naming the upload route', async () => {
    const id = await newUser();
    const fake = { name: 'x.png', type: 'image/png', size: 1, url: '/users/1/avatar', etag: '"AAAAAAAAAAAAAAAAAAAAAA"' };
    for (const [method, url] of [['POST', '/users'], ['PUT', `/users/${id}`], ['PATCH', `/users/${id}`]] as const) {
      const response = await t.app.inject({ method, url, payload: { name: 'x', avatar: fake } });
      expect(response.statusCode, `${method} ${url}`).toBe(422);
      const problem = json<{ errors: { pointer: string; detail: string }[] }>(response);
      expect(problem.errors).toContainEqual({ pointer: '/avatar', detail: expect.stringContaining(`PUT /users/<id>/avatar`) as unknown });
    }
  });

  it('keeps a multiple field as a list: POST appends up to maxFiles, DELETE and GET address one file by its key', async () => {
    const id = await newUser();
    const one = json<User>(await upload(`/users/${id}/attachments?name=a.txt`, 'first', { 'content-type': 'text/plain' }, 'POST'));
    const two = json<User>(await upload(`/users/${id}/attachments?name=b.txt`, 'second', { 'content-type': 'text/plain' }, 'POST'));
    expect(two.attachments?.map((f) => f.name)).toEqual(['a.txt', 'b.txt']);
    const [a, b] = filesIn(two.attachments) as [FileValue, FileValue];
    expect(a.url).toBe(`/users/${id}/attachments/${keyOf(a) ?? ''}`);
    expect(one.attachments).toHaveLength(1);

    const third = await upload(`/users/${id}/attachments`, 'third', {}, 'POST');
    expect(third.statusCode).toBe(422);
    expect(stored()).not.toContain(keyOf(json<User>(third).attachments?.[2]));

    const got = await t.app.inject({ url: b.url });
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('second');
    expect(got.headers['content-disposition']).toMatch(/^attachment; filename="b.txt"/);

    expect((await t.app.inject({ method: 'DELETE', url: a.url })).statusCode).toBe(204);
    expect(json<User>(await t.app.inject({ url: `/users/${id}` })).attachments?.map((f) => f.name)).toEqual(['b.txt']);
    await expect.poll(() => existsSync(storedPath(a))).toBe(false);
    expect((await t.app.inject({ method: 'DELETE', url: a.url })).statusCode).toBe(404);

    // PUT replaces the whole list with one file.
    const replaced = json<User>(await upload(`/users/${id}/attachments?name=c.txt`, 'third'));
    expect(replaced.attachments?.map((f) => f.name)).toEqual(['c.txt']);
    await expect.poll(() => existsSync(storedPath(b))).toBe(false);
  });

  it('sanitises file names: path components, control characters, bidirectional overrides, over-long names', async () => {
    const id = await newUser();
    const named = async (headers: Record<string, string>, query = ''): Promise<string> =>
      (json<User>(await upload(`/users/${id}/notes${query}`, 'x', headers)).notes as FileValue).name;
    expect(await named({}, `?name=${encodeURIComponent('../../etc/passwd')}`)).toBe('passwd');
    expect(await named({}, `?name=${encodeURIComponent('..\\..\\boot.ini')}`)).toBe('boot.ini');
    expect(await named({}, `?name=${encodeURIComponent('invoice\u202Egpj.exe')}`)).toBe('invoicegpj.exe');
    expect(await named({ 'content-disposition': `attachment; filename*=UTF-8''a%00b%0A%1Fc.txt` })).toBe('abc.txt');
    expect(await named({ 'content-disposition': 'attachment; filename="report.pdf"' })).toBe('report.pdf');
    expect(await named({}, `?name=${encodeURIComponent('...')}`)).toBe('file');
    const long = await named({ 'content-disposition': `attachment; filename="${'a'.repeat(10_000)}.txt"` });
    expect(long).toBe(`${'a'.repeat(251)}.txt`);
    // Cut on a character, not inside one: 127 two-byte é and the extension.
    const accented = await named({}, `?name=${encodeURIComponent('é'.repeat(300))}.txt`);
    expect(accented).toBe(`${'é'.repeat(125)}.txt`);
  });

  it('documents the file routes in /openapi.json, a valid OpenAPI 3.1 document, with binary bodies', async () => {
    type Op = { operationId?: string; requestBody?: { content: Record<string, unknown> }; responses: Record<string, { content?: Record<string, unknown> }> };
    const document = json<{ paths: Record<string, Record<string, Op>> }>(await t.app.inject({ url: '/openapi.json' }));
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
    expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
    const avatar = document.paths['/users/{id}/avatar'];
    expect(avatar?.put?.requestBody?.content['*/*']).toEqual({ schema: { type: 'string', format: 'binary' } });
    expect(avatar?.get?.responses['200']?.content?.['*/*']).toEqual({ schema: { type: 'string', format: 'binary' } });
    expect(Object.keys(avatar?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '206', '304', '404', '416']));
    expect(Object.keys(document.paths['/users/{id}/attachments'] ?? {}).sort()).toEqual(['delete', 'parameters', 'post', 'put']);
    expect(Object.keys(document.paths['/users/{id}/attachments/{key}'] ?? {}).sort()).toEqual(['delete', 'get', 'parameters']);
  });

  it('shows file values in GraphQL as JSON, and refuses a value that is no upload in a mutation', async () => {
    const id = await newUser();
    const avatar = json<User>(await upload(`/users/${id}/avatar?name=g.png`, png())).avatar;
    const read = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: `{ user(id: "${id}") { avatar attachments } }` } });
    expect(json<{ data: { user: { avatar: FileValue; attachments: null } } }>(read).data.user).toEqual({ avatar, attachments: null });
    const write = await t.app.inject({ method: 'POST', url: '/graphql', payload: { query: `mutation { updateUser(id: "${id}", input: { avatar: { name: "x" } }) { id } }` } });
    // File fields take the Upload scalar in inputs: a file part of a multipart request (files-graphql.test.ts).
    expect(JSON.stringify(json(write))).toContain('An Upload cannot be written in the query');
  });

  it('is a 404 for a record that does not exist, before a byte is stored', async () => {
    const before = new Set(stored());
    expect((await upload('/users/999999/avatar', png())).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/users/999999/avatar' })).statusCode).toBe(404);
    expect(stored().filter((key) => !before.has(key))).toEqual([]);
  });
});
