import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';
import { form, png, storedFiles, type Part } from './helpers/files.js';

/**
 * multipart/form-data on POST, PATCH and PUT (docs/files.md#multipart-forms): fields as text parts
 * (or @jsonPayload), files streamed to storage before the row is written in one transaction, the
 * files removed when anything fails; checked on the storage directory, on the suite's database.
 */

checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string, required: true, maxLength: 20 }
      age: { type: integer }
      active: { type: boolean }
      prefs: { type: json }
      avatar: { type: file, maxSize: 64KB, accept: [image/png] }
      attachments: { type: file, multiple: true, maxFiles: 2, maxSize: 1MB }
  notes:
    fields:
      text: { type: string }
`;

type User = { id: number; name: string; age: number | null; active: boolean | null; prefs: unknown; avatar: FileValue | null; attachments: FileValue[] | null };

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

describe('multipart writes', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  const stored = (): string[] => storedFiles(dir.path);
  const send = (method: 'POST' | 'PATCH' | 'PUT', url: string, parts: Part[], headers: Record<string, string> = {}) => {
    const body = form(parts);
    return t.app.inject({ method, url, payload: body.payload, headers: { ...body.headers, ...headers } });
  };
  const userCount = async (): Promise<number> => json<User[]>(await t.app.inject({ url: '/users?limit=1000' })).length;

  beforeAll(async () => {
    dir = tempDir('restgraph-multipart-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('creates a row with its fields and files in one request; the files download byte-identical', async () => {
    const avatar = png(10_000);
    const doc = randomBytes(50_000);
    const post = await send('POST', '/users', [
      { name: 'name', value: 'ann' },
      { name: 'age', value: '41' },
      { name: 'active', value: 'true' },
      { name: 'prefs', value: '{"theme":"dark"}' },
      { name: 'avatar', file: avatar, filename: '../me.png', type: 'image/png' },
      { name: 'attachments', file: doc, filename: 'a.bin' },
      { name: 'attachments', file: 'hello', filename: 'b.txt', type: 'text/plain' },
    ]);
    expect(post.statusCode, post.body).toBe(201);
    const user = json<User>(post);
    expect(post.headers.location).toBe(`/users/${user.id}`);
    expect(user).toMatchObject({ name: 'ann', age: 41, active: true, prefs: { theme: 'dark' } });
    expect(user.avatar).toMatchObject({ name: 'me.png', type: 'image/png', size: avatar.length, url: `/users/${user.id}/avatar` });
    expect(user.attachments?.map((f) => [f.name, f.type, f.size])).toEqual([['a.bin', 'application/octet-stream', doc.length], ['b.txt', 'text/plain', 5]]);
    const [a, b] = user.attachments as [FileValue, FileValue];
    expect(a.url).toBe(`/users/${user.id}/attachments/${keyOf(a) ?? ''}`);
    expect(sha256((await t.app.inject({ url: user.avatar?.url ?? '' })).rawPayload)).toBe(sha256(avatar));
    expect(sha256((await t.app.inject({ url: a.url })).rawPayload)).toBe(sha256(doc));
    expect((await t.app.inject({ url: b.url })).body).toBe('hello');
    // The row as stored is the answer.
    expect(json<User>(await t.app.inject({ url: `/users/${user.id}` }))).toEqual(user);
  });

  it('takes the fields as one @jsonPayload part; PATCH replaces a file (the old one deleted after the commit) and PUT replaces the row', async () => {
    const created = json<User>(await send('POST', '/users', [{ name: '@jsonPayload', value: '{"name":"bob","age":7}' }, { name: 'avatar', file: png(100), filename: 'a.png' }]));
    expect(created).toMatchObject({ name: 'bob', age: 7 });
    const first = keyOf(created.avatar) ?? '';
    expect(stored()).toContain(first);

    const patch = await send('PATCH', `/users/${created.id}`, [{ name: 'age', value: '8' }, { name: 'avatar', file: png(200), filename: 'b.png' }]);
    expect(patch.statusCode, patch.body).toBe(200);
    const patched = json<User>(patch);
    expect(patched).toMatchObject({ name: 'bob', age: 8, avatar: { name: 'b.png', size: png(200).length } });
    await expect.poll(() => stored().includes(first)).toBe(false);
    expect(stored()).toContain(keyOf(patched.avatar));

    // An empty part clears a field (null), as a JSON null would; a file field's too.
    const cleared = json<User>(await send('PATCH', `/users/${created.id}`, [{ name: 'age', value: '' }, { name: 'avatar', value: '' }]));
    expect(cleared).toMatchObject({ age: null, avatar: null });
    await expect.poll(() => stored().includes(keyOf(patched.avatar) ?? '')).toBe(false);

    const put = await send('PUT', `/users/${created.id}`, [{ name: 'name', value: 'cy' }, { name: 'attachments', file: 'x', filename: 'x.txt' }]);
    expect(put.statusCode, put.body).toBe(200);
    expect(json<User>(put)).toMatchObject({ name: 'cy', age: null, attachments: [{ name: 'x.txt', size: 1 }] });
  });

  it('removes the stored files and writes no row when anything fails', async () => {
    const before = stored();
    const rows = await userCount();
    // A refused file after a good one (415: not a PNG).
    const wrongType = await send('POST', '/users', [{ name: 'name', value: 'dan' }, { name: 'attachments', file: 'ok', filename: 'ok.txt' }, { name: 'avatar', file: '<html></html>', filename: 'x.png', type: 'image/png' }]);
    expect(wrongType.statusCode).toBe(415);
    // A file past its field's maxSize (413).
    const tooLarge = await send('POST', '/users', [{ name: 'name', value: 'dan' }, { name: 'attachments', file: 'ok', filename: 'ok.txt' }, { name: 'avatar', file: png(70_000), filename: 'big.png' }]);
    expect(tooLarge.statusCode).toBe(413);
    // Fields that fail validation, read after the files (422, every problem named).
    const invalid = await send('POST', '/users', [{ name: 'avatar', file: png(10), filename: 'a.png' }, { name: 'name', value: 'x'.repeat(30) }, { name: 'age', value: 'old' }]);
    expect(invalid.statusCode).toBe(422);
    expect(json<{ errors: { pointer: string }[] }>(invalid).errors.map((e) => e.pointer).sort()).toEqual(['/age', '/name']);
    // Too many files for a field, a file part for a field that is no file field, a value given twice.
    expect((await send('POST', '/users', [{ name: 'name', value: 'e' }, ...['1', '2', '3'].map((n) => ({ name: 'attachments', file: n, filename: `${n}.txt` }))])).statusCode).toBe(422);
    expect((await send('POST', '/users', [{ name: 'name', value: 'e' }, { name: 'avatar', file: png(10), filename: 'a.png' }, { name: 'age', file: '4', filename: 'age.txt' }])).statusCode).toBe(422);
    expect((await send('POST', '/users', [{ name: 'name', value: 'e' }, { name: 'avatar', file: png(10), filename: 'a.png' }, { name: 'avatar', file: png(10), filename: 'b.png' }])).statusCode).toBe(422);
    // A missing row: 404 before anything is stored.
    expect((await send('PATCH', '/users/999999', [{ name: 'avatar', file: png(10), filename: 'a.png' }])).statusCode).toBe(404);
    // A broken body.
    const broken = await t.app.inject({ method: 'POST', url: '/users', payload: '--x\r\nnonsense', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    expect(broken.statusCode, broken.body).toBe(400);
    // A text part given twice.
    expect((await send('POST', '/users', [{ name: 'name', value: 'e' }, { name: 'name', value: 'f' }])).statusCode).toBe(422);
    await expect.poll(() => stored()).toEqual(before);
    expect(await userCount()).toBe(rows);
  });

  it('bounds the parts, and keeps multipart a 415 where it is not read', async () => {
    const many = Array.from({ length: 250 }, (_, i) => ({ name: `f${i}`, value: 'v' }));
    const parts = await send('POST', '/users', [{ name: 'name', value: 'f' }, ...many]);
    expect(parts.statusCode).toBe(413);
    // Text parts are bounded together, as a JSON body is: three of 400 KB are a 413 (one is not).
    const big = 'x'.repeat(400 * 1024);
    const texts = await send('POST', '/users', [{ name: 'name', value: 'h' }, { name: 'a', value: big }, { name: 'b', value: big }, { name: 'c', value: big }]);
    expect(texts.statusCode, texts.body).toBe(413);
    expect((await send('POST', '/users', [{ name: 'name', value: 'h' }, { name: 'a', value: big }])).statusCode).toBe(422);
    expect((await send('POST', '/users', [{ name: 'name', value: 'g' }], { 'idempotency-key': 'k1' })).statusCode).toBe(400);
    // A resource without file fields, and other write routes, take JSON only.
    expect((await send('POST', '/notes', [{ name: 'text', value: 'hi' }])).statusCode).toBe(415);
    expect((await send('POST', '/v1/tokens', [{ name: 'name', value: 'k' }])).statusCode).toBe(415);
    expect((await send('POST', '/graphql', [{ name: 'query', value: '{ __typename }' }])).statusCode).not.toBe(500);
    expect((await send('POST', '/users/1/attachments', [{ name: 'text', value: 'hi' }])).statusCode).not.toBe(500);
  });
});
