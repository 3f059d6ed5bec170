import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import { parseSchemaText } from '../../src/schema/load-schema.js';
import { keyOf, type FileValue } from '../../src/core/file-fields.js';
import { actAsAdmin, discardLogs, json, TEST_ADMIN_TOKEN } from './test-app.js';

/** What tests of files moving between databases and storages (export, import, copy) share. */

export const FILES_SCHEMA = `
resources:
  users:
    fields:
      name: { type: string }
      avatar: { type: file, maxSize: 1MB, accept: [image/png] }
      attachments: { type: file, multiple: true, maxFiles: 3, maxSize: 8MB }
`;

export const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

export type FileUser = { id: number; name: string | null; avatar: FileValue | null; attachments: FileValue[] };

/** The app on `databaseUrl` with its files in `filesDir` (undefined: the default beside the database), as the admin. */
export async function fileApp(databaseUrl: string, filesDir: string | undefined): Promise<FastifyInstance> {
  return actAsAdmin(
    await buildApp({ databaseUrl, schema: parseSchemaText(FILES_SCHEMA), adminToken: TEST_ADMIN_TOKEN, logDestination: discardLogs(), files: filesDir === undefined ? {} : { dir: filesDir } }),
  );
}

/** A user with an avatar and two attachments uploaded; resolves to the user as stored and each file's bytes by key. */
export async function userWithFiles(app: FastifyInstance, name: string, attachmentBytes: Buffer[], avatar: Buffer): Promise<{ user: FileUser; bytes: Map<string, Buffer> }> {
  const created = await app.inject({ method: 'POST', url: '/users', payload: { name } });
  const id = json<FileUser>(created).id;
  const upload = async (method: 'PUT' | 'POST', url: string, body: Buffer, type: string): Promise<void> => {
    const answer = await app.inject({ method, url, payload: body, headers: { 'content-type': type } });
    if (answer.statusCode !== 200) throw new Error(`${method} ${url}: ${answer.statusCode} ${answer.body}`);
  };
  await upload('PUT', `/users/${id}/avatar?name=me.png`, avatar, 'image/png');
  for (const [i, bytes] of attachmentBytes.entries()) await upload('POST', `/users/${id}/attachments?name=part-${i}.bin`, bytes, 'application/octet-stream');
  const user = json<FileUser>(await app.inject({ url: `/users/${id}` }));
  const bytes = new Map<string, Buffer>();
  bytes.set(keyOf(user.avatar) as string, avatar);
  user.attachments.forEach((file, i) => bytes.set(keyOf(file) as string, attachmentBytes[i] as Buffer));
  return { user, bytes };
}

/** The SHA-256 of every file of the user, downloaded through the API, by key. */
export async function downloadedHashes(app: FastifyInstance, user: FileUser): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  for (const file of [user.avatar, ...user.attachments]) {
    if (file === null) continue;
    const answer = await app.inject({ url: file.url });
    if (answer.statusCode !== 200) throw new Error(`GET ${file.url}: ${answer.statusCode} ${answer.body}`);
    hashes.set(keyOf(file) as string, sha256(answer.rawPayload));
  }
  return hashes;
}
