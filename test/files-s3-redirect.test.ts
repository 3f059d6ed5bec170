import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { buildApp } from '../src/app/build-app.js';
import type { RestgraphOptions } from '../src/app/app-options.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { keyOf, newFileKey, type FileValue } from '../src/core/file-fields.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';
import { discardLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase } from './helpers/test-database.js';
import { freePort } from './helpers/ports.js';
import { startS3Server, type TestBucket } from './helpers/s3-server.js';

/**
 * S3 storage beyond the lifecycle (docs/files.md#s3): downloads redirected to presigned URLs only
 * after the record's and the field's read access, the orphan sweep over a bucket, and the start-up
 * errors of S3 settings; on the suite's database.
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

type Profile = { id: number; photo?: FileValue | null; secret?: FileValue | null };
const sha256 = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

let bucket: TestBucket;
beforeAll(async () => {
  bucket = await startS3Server();
});
afterAll(async () => {
  await bucket.close();
});

describe('presigned downloads', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let admin: string;
  let id: number;
  let bytes: Buffer;

  beforeAll(async () => {
    t = await startTestApp({ schema: parseSchemaText(SCHEMA), files: { url: `s3://${bucket.name}/redirect`, s3: bucket.settings, downloads: 'redirect', downloadUrlTtlSeconds: 30 }, jwt: { secret: RULES_JWT_SECRET } });
    alice = await bearerJwt({ sub: 'alice' });
    bob = await bearerJwt({ sub: 'bob' });
    admin = await bearerJwt({ sub: 'alice', scope: 'profiles:admin' }); // the owner, with the field's scope
    id = json<Profile>(await t.app.inject({ method: 'POST', url: '/profiles', payload: {}, headers: { authorization: alice } })).id;
    bytes = await sharp({ create: { width: 200, height: 200, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
    const put = await t.app.inject({ method: 'PUT', url: `/profiles/${id}/photo?name=me.png`, payload: bytes, headers: { authorization: alice, 'content-type': 'image/png' } });
    expect(put.statusCode, put.body).toBe(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it('redirects a reader to a short-lived URL that serves the bytes with the download headers', async () => {
    const get = await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: alice } });
    expect(get.statusCode).toBe(302);
    expect(get.headers['cache-control']).toBe('private, no-store');
    const location = String(get.headers.location);
    expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('30');
    const served = await fetch(location);
    expect(served.status).toBe(200);
    expect(sha256(new Uint8Array(await served.arrayBuffer()))).toBe(sha256(bytes));
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('content-disposition')).toBe(`inline; filename="me.png"; filename*=UTF-8''me.png`);
    // A range goes to storage with the redirected request.
    const part = await fetch(location, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);

    const etag = String(get.headers.etag);
    expect((await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: alice, 'if-none-match': etag } })).statusCode).toBe(304);
  });

  it('redirects thumbnails too, rendered and stored first', async () => {
    const get = await t.app.inject({ url: `/profiles/${id}/photo?thumb=100x100c`, headers: { authorization: alice } });
    expect(get.statusCode, get.body).toBe(302);
    const served = await fetch(String(get.headers.location));
    expect(await sharp(Buffer.from(await served.arrayBuffer())).metadata()).toMatchObject({ width: 100, height: 100 });
  });

  it('answers who cannot read the row with 404 and who cannot read the field as for the field, never with a URL', async () => {
    const other = await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: bob } });
    expect(other.statusCode).toBe(404);
    expect(other.headers.location).toBeUndefined();
    const anonymous = await t.app.inject({ url: `/profiles/${id}/photo`, headers: { authorization: '' } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers.location).toBeUndefined();

    const secret = await t.app.inject({ method: 'PUT', url: `/profiles/${id}/secret`, payload: 'top secret', headers: { authorization: admin, 'content-type': 'text/plain' } });
    expect(secret.statusCode, secret.body).toBe(200);
    expect((await t.app.inject({ url: `/profiles/${id}/secret`, headers: { authorization: admin } })).statusCode).toBe(302);
    const hidden = await t.app.inject({ url: `/profiles/${id}/secret`, headers: { authorization: alice } });
    expect(hidden.statusCode).toBe(403);
    expect(hidden.headers.location).toBeUndefined();
  });
});

describe('the orphan sweep on S3', () => {
  it('deletes at start-up the objects no row references once they are an hour old, and keeps the others', async () => {
    const dir = tempDir('restgraph-files-');
    const db = await createTestDatabase(dir.path);
    const prefix = 'sweep/';
    const start = async () =>
      buildApp({ schema: parseSchemaText(SCHEMA), databaseUrl: db.url, adminToken: TEST_ADMIN_TOKEN, logDestination: discardLogs(), files: { url: `s3://${bucket.name}/${prefix}`, s3: bucket.settings }, jwt: { secret: RULES_JWT_SECRET } });
    const object = async (key: string, hours: number): Promise<string> => {
      await bucket.putObject(`${prefix}${key}`, 'left by a crash');
      bucket.age(`${prefix}${key}`, hours);
      return key;
    };
    try {
      const first = await start();
      const alice = await bearerJwt({ sub: 'alice' });
      const id = json<Profile>(await first.inject({ method: 'POST', url: '/profiles', payload: {}, headers: { authorization: alice } })).id;
      const photo = json<Profile>(await first.inject({ method: 'PUT', url: `/profiles/${id}/photo`, payload: await sharp({ create: { width: 4, height: 4, channels: 3, background: '#fff' } }).png().toBuffer(), headers: { authorization: alice, 'content-type': 'image/png' } })).photo;
      await first.close();

      const referenced = keyOf(photo) ?? '';
      bucket.age(`${prefix}${referenced}`, 2); // old too: only being referenced keeps it
      const old = await object(newFileKey(), 2);
      const young = await object(newFileKey(), 0);
      const oldThumb = await object(`${old}.100x100`, 2);
      const keptThumb = await object(`${referenced}.100x100c`, 2);
      const loneThumb = await object(`${newFileKey()}.300x300`, 2);
      const foreign = await object('notes/readme.txt', 2); // not restgraph's: never touched

      const second = await start();
      try {
        await expect.poll(() => bucket.keys(prefix)).not.toContain(old);
        await expect.poll(() => bucket.keys(prefix)).not.toContain(loneThumb);
        const keys = await bucket.keys(prefix);
        expect(keys).not.toContain(oldThumb);
        expect(keys).toEqual(expect.arrayContaining([referenced, young, keptThumb, foreign]));
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
      dir.cleanup();
    }
  });
});

describe('S3 settings at start-up', () => {
  const start = (files: RestgraphOptions['files']) => buildApp({ schema: parseSchemaText(SCHEMA), databaseUrl: ':memory:', logDestination: discardLogs(), files, jwt: { secret: RULES_JWT_SECRET } });

  it('refuses a bucket that cannot be reached, with an error naming it and why', async () => {
    await expect(start({ url: 's3://no-such-bucket/x', s3: bucket.settings })).rejects.toThrow(/Invalid configuration RESTGRAPH_FILES_URL: cannot reach the S3 bucket no-such-bucket under x\/ at http:\/\/127\.0\.0\.1:\d+: no such bucket/);
    const closed = await freePort();
    await expect(start({ url: `s3://${bucket.name}`, s3: { ...bucket.settings, endpoint: `http://127.0.0.1:${closed}` } })).rejects.toThrow(/Invalid configuration RESTGRAPH_FILES_URL: cannot reach the S3 bucket restgraph-files at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });

  it('refuses a directory and a bucket together, a redirect without a bucket, and a bad bucket URL', async () => {
    await expect(start({ url: `s3://${bucket.name}`, dir: '/tmp/x', s3: bucket.settings })).rejects.toThrow(/RESTGRAPH_FILES_URL: and RESTGRAPH_FILES_DIR are both set/);
    await expect(start({ downloads: 'redirect' })).rejects.toThrow(/RESTGRAPH_FILES_DOWNLOADS: redirect needs S3 storage/);
    await expect(start({ url: 's3://Bad_Bucket/x' })).rejects.toThrow(/RESTGRAPH_FILES_URL: must be s3:\/\/<bucket>\/<prefix>/);
    await expect(start({ url: `s3://${bucket.name}/a/../b` })).rejects.toThrow(/RESTGRAPH_FILES_URL: has a prefix/);
  });

  it('reads the settings from the environment', () => {
    expect(optionsFromEnv({ RESTGRAPH_FILES_URL: 's3://b1/p', AWS_REGION: 'eu-west-3', AWS_ENDPOINT_URL: 'http://minio:9000', RESTGRAPH_FILES_S3_PATH_STYLE: 'false', RESTGRAPH_FILES_DOWNLOADS: 'redirect', RESTGRAPH_FILES_URL_TTL_SECONDS: '120' }).files).toEqual({
      url: 's3://b1/p',
      s3: { region: 'eu-west-3', endpoint: 'http://minio:9000', forcePathStyle: false },
      downloads: 'redirect',
      downloadUrlTtlSeconds: 120,
    });
    expect(optionsFromEnv({ RESTGRAPH_FILES_URL: 's3://b1', AWS_ENDPOINT_URL: 'http://a:1', AWS_ENDPOINT_URL_S3: 'http://s3:2' }).files?.s3).toEqual({ endpoint: 'http://s3:2' });
    expect(() => optionsFromEnv({ RESTGRAPH_FILES_URL: 's3://b1', RESTGRAPH_FILES_DIR: '/srv/files' })).toThrow('Invalid configuration RESTGRAPH_FILES_URL: and RESTGRAPH_FILES_DIR are both set');
    expect(() => optionsFromEnv({ RESTGRAPH_FILES_DOWNLOADS: 'proxy' })).toThrow('Invalid configuration RESTGRAPH_FILES_DOWNLOADS: must be stream or redirect');
    expect(() => optionsFromEnv({ RESTGRAPH_FILES_URL_TTL_SECONDS: '86400' })).toThrow(/RESTGRAPH_FILES_URL_TTL_SECONDS/);
  });
});
