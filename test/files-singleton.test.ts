import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';
import { form, png, storedFiles, type Part } from './helpers/files.js';

/**
 * File fields on a singleton (docs/files.md, docs/schema.md#singletons): the multipart PUT or
 * GraphQL replace that creates the one record keeps its files; later writes replace them (the
 * old file deleted after commit); the raw upload route works at the url the value names.
 */

checkResponsesAgainstOpenApi();

const SCHEMA = `
resources:
  settings:
    singleton: true
    fields:
      title: { type: string }
      logo: { type: file, maxSize: 64KB, accept: [image/png] }
  brand:
    singleton: true
    fields:
      label: { type: string }
      logo: { type: file, maxSize: 64KB }
  rawsettings:
    singleton: true
    fields:
      doc: { type: file, maxSize: 64KB }
`;

type Settings = { id: number; title: string | null; logo: FileValue | null };
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const PREFLIGHT = { 'graphql-require-preflight': '1' };

describe('file fields on a singleton', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  const stored = (): string[] => storedFiles(dir.path);
  const send = (method: 'PATCH' | 'PUT', url: string, parts: Part[]) => {
    const body = form(parts);
    return t.app.inject({ method, url, payload: body.payload, headers: body.headers });
  };
  const download = async (url: string): Promise<string> => sha256((await t.app.inject({ url })).rawPayload);

  beforeAll(async () => {
    dir = tempDir('restgraph-singleton-files-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('a multipart PUT on an empty singleton creates the record with its file; PATCH and PUT replace it', async () => {
    const first = png(1_000);
    const put = await send('PUT', '/settings', [{ name: 'title', value: 'home' }, { name: 'logo', file: first, filename: 'logo.png', type: 'image/png' }]);
    expect(put.statusCode, put.body).toBe(200);
    const created = json<Settings>(put);
    expect(created).toMatchObject({ id: 1, title: 'home', logo: { name: 'logo.png', type: 'image/png', size: first.length } });
    const firstKey = keyOf(created.logo) ?? '';
    expect(stored()).toEqual([firstKey]);
    expect(json<Settings>(await t.app.inject({ url: '/settings' }))).toEqual(created);
    expect(await download(created.logo?.url ?? '')).toBe(sha256(first));

    const second = png(2_000);
    const patch = await send('PATCH', '/settings', [{ name: 'logo', file: second, filename: 'two.png', type: 'image/png' }]);
    expect(patch.statusCode, patch.body).toBe(200);
    const patched = json<Settings>(patch);
    expect(patched).toMatchObject({ title: 'home', logo: { name: 'two.png', size: second.length } });
    await expect.poll(stored).toEqual([keyOf(patched.logo)]);
    expect(await download(patched.logo?.url ?? '')).toBe(sha256(second));

    const third = png(3_000);
    const replaced = json<Settings>(await send('PUT', '/settings', [{ name: 'logo', file: third, filename: 'three.png', type: 'image/png' }]));
    expect(replaced).toMatchObject({ title: null, logo: { name: 'three.png', size: third.length } });
    await expect.poll(stored).toEqual([keyOf(replaced.logo)]);
    expect(await download(replaced.logo?.url ?? '')).toBe(sha256(third));
  });

  it('GraphQL replace with an upload creates the record with its file, and a second replace replaces it', async () => {
    const replace = (bytes: Buffer, name: string) => {
      const operations = { query: 'mutation ($input: BrandCreateInput!) { replaceBrand(input: $input) { id label logo } }', variables: { input: { label: name, logo: null } } };
      const body = form([{ name: 'operations', value: JSON.stringify(operations) }, { name: 'map', value: JSON.stringify({ 0: ['variables.input.logo'] }) }, { name: '0', file: bytes, filename: `${name}.bin` }]);
      return t.app.inject({ method: 'POST', url: '/graphql', payload: body.payload, headers: { ...body.headers, ...PREFLIGHT } });
    };
    const before = stored();
    const first = randomBytes(5_000);
    const answer = json<{ data: { replaceBrand: { id: string; label: string; logo: FileValue | null } } }>(await replace(first, 'one'));
    expect(answer.data.replaceBrand).toMatchObject({ id: '1', label: 'one', logo: { name: 'one.bin', size: first.length } });
    const firstKey = keyOf(answer.data.replaceBrand.logo) ?? '';
    expect(stored()).toEqual([...before, firstKey].sort());
    expect(await download(answer.data.replaceBrand.logo?.url ?? '')).toBe(sha256(first));

    const second = randomBytes(6_000);
    const again = json<{ data: { replaceBrand: { logo: FileValue | null } } }>(await replace(second, 'two'));
    await expect.poll(stored).toEqual([...before, keyOf(again.data.replaceBrand.logo)].sort());
    expect(await download(again.data.replaceBrand.logo?.url ?? '')).toBe(sha256(second));
  });

  it("the raw upload route is at the url the value names, /<name>/1/<field>, once the record exists", async () => {
    const bytes = randomBytes(4_000);
    const raw = (url: string) => t.app.inject({ method: 'PUT', url, payload: bytes, headers: { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="d.bin"' } });
    const before = stored();
    // No /<name>/<field> path: a singleton has no /<name>/{id} either (docs/schema.md#singletons).
    expect((await raw('/rawsettings/doc')).statusCode).toBe(404);
    // Before the first PUT there is no record to hold the file.
    expect((await raw('/rawsettings/1/doc')).statusCode).toBe(404);
    expect(stored()).toEqual(before);
    expect((await t.app.inject({ method: 'PUT', url: '/rawsettings', payload: {} })).statusCode).toBe(200);
    const upload = await raw('/rawsettings/1/doc');
    expect(upload.statusCode, upload.body).toBe(200);
    const record = json<{ doc: FileValue }>(await t.app.inject({ url: '/rawsettings' }));
    expect(record.doc).toMatchObject({ name: 'd.bin', size: bytes.length, url: '/rawsettings/1/doc' });
    expect(await download(record.doc.url)).toBe(sha256(bytes));
    expect(stored()).toEqual([...before, keyOf(record.doc)].sort());
  });
});
