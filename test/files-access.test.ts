import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaError } from '../src/errors.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { keyOf, newFileKey, type FileValue } from '../src/core/file-fields.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { json, startTestApp, tempDir, type TestApp } from './helpers/test-app.js';
import { form, png, type Part } from './helpers/files.js';
import { buildApp } from '../src/app/build-app.js';
import { createTestDatabase } from './helpers/test-database.js';
import { discardLogs, TEST_ADMIN_TOKEN } from './helpers/test-app.js';

/**
 * File fields under the access rules (docs/files.md#download): a file of a row the principal
 * cannot read is a 404, a missing scope a 401/403 as for the record, the field's read and write
 * access apply; the events of uploads carry metadata only; the orphan sweep; schema checks.
 */

const SCHEMA = `
resources:
  profiles:
    access: { read: authenticated, write: authenticated }
    owner: ownerId
    fields:
      ownerId: { type: string }
      photo: { type: file, accept: [image/*] }
      secret: { type: file, read: [profiles:admin], write: [profiles:admin] }
`;

type Profile = { id: number; ownerId: string; photo?: FileValue | null; secret?: FileValue | null };

describe('file fields under the access rules', () => {
  let t: TestApp;
  let dir: { path: string; cleanup: () => void };
  let alice: string;
  let bob: string;
  let admin: string;
  let id: number;

  beforeAll(async () => {
    dir = tempDir('restgraph-files-');
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { dir: dir.path }, jwt: { secret: RULES_JWT_SECRET } });
    alice = await bearerJwt({ sub: 'alice' });
    bob = await bearerJwt({ sub: 'bob' });
    admin = await bearerJwt({ sub: 'carol', scope: 'profiles:admin' });
    const created = await t.app.inject({ method: 'POST', url: '/profiles', payload: {}, headers: { authorization: alice } });
    expect(created.statusCode, created.body).toBe(201);
    id = json<Profile>(created).id;
  });
  afterAll(async () => {
    await t.close();
    dir.cleanup();
  });

  const put = (url: string, authorization: string, body: Buffer | string = png()) =>
    t.app.inject({ method: 'PUT', url, payload: body, headers: { authorization, 'content-type': 'image/png' } });
  const stored = (): string[] => readdirSync(dir.path).filter((s) => s !== 'tmp').flatMap((s) => readdirSync(join(dir.path, s)));

  it('lets the owner upload and download, and answers 404 to someone who cannot read the row', async () => {
    const up = await put(`/profiles/${id}/photo`, alice);
    expect(up.statusCode, up.body).toBe(200);
    expect((await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: alice } })).statusCode).toBe(200);
    const before = new Set(stored());
    expect((await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: bob } })).statusCode).toBe(404);
    expect((await put(`/profiles/${id}/photo`, bob)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: `/profiles/${id}/photo`, headers: { authorization: bob } })).statusCode).toBe(404);
    expect(stored().filter((k) => !before.has(k))).toEqual([]);
  });

  it('answers 401 without a credential, as for the record', async () => {
    expect((await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: '' } })).statusCode).toBe(401);
    expect((await put(`/profiles/${id}/photo`, '')).statusCode).toBe(401);
  });

  it("applies the field's read and write access", async () => {
    expect((await put(`/profiles/${id}/secret`, alice, 'classified')).statusCode).toBe(403);
    expect((await put(`/profiles/${id}/secret`, admin, 'classified')).statusCode).toBe(404); // not the owner: the row is not visible
    // The admin scope does not make carol the owner: alice's row stays hers. The field read rule hides it from alice.
    expect((await t.app.inject({ url: `/profiles/${id}/secret`, headers: { authorization: alice } })).statusCode).toBe(403);
  });

  it('applies the same access to multipart writes, refusing before a byte is stored', async () => {
    const send = (method: 'POST' | 'PATCH', url: string, authorization: string, parts: Part[]) => {
      const body = form(parts);
      return t.app.inject({ method, url, payload: body.payload, headers: { ...body.headers, authorization } });
    };
    const before = new Set(stored());
    const photo: Part = { name: 'photo', file: png(500), filename: 'p.png', type: 'image/png' };
    expect((await send('POST', '/profiles', '', [photo])).statusCode).toBe(401);
    expect((await send('PATCH', `/profiles/${id}`, bob, [photo])).statusCode).toBe(404);
    expect((await send('POST', '/profiles', alice, [photo, { name: 'secret', file: 'classified', filename: 's.txt' }])).statusCode).toBe(403);
    expect((await send('PATCH', `/profiles/${id}`, alice, [{ name: 'secret', file: 'classified', filename: 's.txt' }])).statusCode).toBe(403);
    await expect.poll(() => stored().filter((k) => !before.has(k))).toEqual([]);

    const created = await send('POST', '/profiles', alice, [photo]);
    expect(created.statusCode, created.body).toBe(201);
    const profile = json<Profile>(created);
    expect(profile.ownerId).toBe('alice');
    // Its thumbnail is read under the same rules as the file.
    expect((await t.app.inject({ url: `/profiles/${profile.id}/photo?thumb=100x100`, headers: { authorization: alice } })).statusCode).toBe(200);
    expect((await t.app.inject({ url: `/profiles/${profile.id}/photo?thumb=100x100`, headers: { authorization: bob } })).statusCode).toBe(404);
  });

  it('puts the metadata in the event, never the bytes', async () => {
    const up = await put(`/profiles/${id}/photo`, alice, png(3000));
    const photo = json<Profile>(up).photo as FileValue;
    const events = await t.db.query<{ data: string | Record<string, unknown> }>(`select data from _restgraph_events where resource = 'profiles' order by id desc limit 1`);
    const data = (typeof events[0]?.data === 'string' ? JSON.parse(events[0].data) : events[0]?.data) as { object: Profile; previous: Profile };
    expect(data.object.photo).toEqual(photo);
    expect(data.previous.photo?.etag).not.toBe(photo.etag);
    expect(JSON.stringify(data).length).toBeLessThan(1000);
  });
});

describe('the orphan sweep', () => {
  it('deletes at start-up the stored files no row references once they are an hour old, and keeps the others', async () => {
    const dir = tempDir('restgraph-files-');
    const db = await createTestDatabase(dir.path);
    const filesDir = join(dir.path, 'files');
    const start = async () => buildApp({ schema: parseSchemaText(SCHEMA), databaseUrl: db.url, adminToken: TEST_ADMIN_TOKEN, logDestination: discardLogs(), files: { dir: filesDir }, jwt: { secret: RULES_JWT_SECRET } });
    const file = (key: string): string => join(filesDir, key.slice(0, 2), key);
    const age = (key: string, hours: number): void => {
      const when = new Date(Date.now() - hours * 3600_000);
      utimesSync(file(key), when, when);
    };
    try {
      const first = await start();
      const alice = await bearerJwt({ sub: 'alice' });
      const id = json<Profile>(await first.inject({ method: 'POST', url: '/profiles', payload: {}, headers: { authorization: alice } })).id;
      const photo = json<Profile>(await first.inject({ method: 'PUT', url: `/profiles/${id}/photo`, payload: png(), headers: { authorization: alice, 'content-type': 'image/png' } })).photo as FileValue;
      await first.close();

      const orphan = (hours: number): string => {
        const key = newFileKey();
        mkdirSync(join(filesDir, key.slice(0, 2)), { recursive: true });
        writeFileSync(file(key), 'left by a crash');
        age(key, hours);
        return key;
      };
      const old = orphan(2);
      const young = orphan(0);
      const referenced = keyOf(photo) ?? '';
      age(referenced, 2); // old too: only being referenced keeps it
      // Thumbnails (derived files) go with their file, are kept with it, and are swept alone when theirs is gone.
      const thumb = (key: string): string => {
        writeFileSync(file(key), 'a thumbnail');
        age(key, 2);
        return key;
      };
      const oldThumb = thumb(`${old}.100x100`);
      const keptThumb = thumb(`${referenced}.100x100c`);
      const loneKey = newFileKey();
      mkdirSync(join(filesDir, loneKey.slice(0, 2)), { recursive: true });
      const loneThumb = thumb(`${loneKey}.300x300`);

      const second = await start();
      try {
        await expect.poll(() => existsSync(file(old))).toBe(false);
        expect(existsSync(file(young))).toBe(true);
        expect(existsSync(file(referenced))).toBe(true);
        await expect.poll(() => existsSync(file(loneThumb))).toBe(false);
        expect(existsSync(file(oldThumb))).toBe(false);
        expect(existsSync(file(keptThumb))).toBe(true);
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
      dir.cleanup();
    }
  });
});

describe('file fields in the schema', () => {
  const problems = (fields: string): string => {
    try {
      parseSchemaText(`resources:\n  things:\n    fields:\n      ${fields}\n`);
      return '';
    } catch (error) {
      if (error instanceof SchemaError) return error.message;
      throw error;
    }
  };

  it('takes sizes with units or in bytes, media types with wildcards, and multiple with maxFiles', () => {
    expect(problems('f: { type: file, maxSize: 5MB, accept: [image/png, image/*] }')).toBe('');
    expect(problems('f: { type: file, maxSize: 1048576 }')).toBe('');
    expect(problems('f: { type: file, multiple: true, maxFiles: 3, maxSize: 1.5GiB }')).toBe('');
  });

  it('refuses what a file field cannot be', () => {
    expect(problems('f: { type: file, maxSize: lots }')).toMatch(/maxSize/);
    expect(problems('f: { type: file, maxSize: 2TB }')).toMatch(/larger than 1TB/);
    expect(problems('f: { type: file, required: true }')).toMatch(/"required" does not apply to file fields/);
    expect(problems('f: { type: file, unique: true }')).toMatch(/"unique" does not apply to file fields/);
    expect(problems('f: { type: file, maxFiles: 3 }')).toMatch(/maxFiles needs multiple/);
    expect(problems('f: { type: file, accept: [png] }')).toMatch(/accept/);
    expect(problems('f: { type: string, maxSize: 5MB }')).toMatch(/"maxSize" applies to file fields/);
  });
});
