import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { keyOf, type FileValue } from '../src/core/file-fields.js';
import { form, png } from './helpers/files.js';

/**
 * File fields through an older API version (docs/versions.md, docs/files.md#multipart-forms): a
 * multipart PUT through a version that lacks some fields leaves them as they are, files included,
 * as a JSON PUT does.
 */

const SCHEMA = `
versions: [v1, v2]
resources:
  photos:
    fields:
      title: { type: string }
      note: { type: string, addedIn: v2 }
      image: { type: file }
      hires: { type: file, addedIn: v2 }
`;

type Photo = { id: number; title: string | null; note?: string | null; image: FileValue | null; hires?: FileValue | null };

describe('file fields through an older version', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  beforeAll(async () => {
    dir = tempDir('restgraph-files-versions-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  it('keeps the fields and files a version lacks on a multipart PUT through it', async () => {
    const created = json<Photo>(await t.app.inject({ method: 'POST', url: '/v2/photos', payload: { title: 'a', note: 'kept' } }));
    const hires = await t.app.inject({ method: 'PUT', url: `/v2/photos/${created.id}/hires`, payload: png(100), headers: { 'content-type': 'application/octet-stream' } });
    expect(hires.statusCode).toBe(200);
    const hiresFile = json<Photo>(hires).hires as FileValue;
    const body = form([{ name: 'title', value: 'mp' }, { name: 'image', file: png(10), filename: 'small.png', type: 'image/png' }]);
    const put = await t.app.inject({ method: 'PUT', url: `/v1/photos/${created.id}`, payload: body.payload, headers: body.headers });
    expect(put.statusCode).toBe(200);
    expect(json<Photo>(put)).not.toHaveProperty('hires');
    const after = json<Photo>(await t.app.inject({ url: `/v2/photos/${created.id}` }));
    // Before: note and hires were null, and the hires file deleted after the commit.
    expect(after).toMatchObject({ title: 'mp', note: 'kept', hires: hiresFile });
    expect(after.image?.name).toBe('small.png');
    const key = keyOf(hiresFile) ?? '';
    expect(existsSync(join(dir.path, key.slice(0, 2), key))).toBe(true);
  });
});
