import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, S3Client, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { S3Settings } from '../../src/files/s3-settings.js';
import { tempDir } from './test-app.js';

/** A local S3-compatible server (s3rver, in this process, on a loopback port, over a temp folder) with one bucket. */
export interface TestBucket {
  /** The bucket's name. */
  name: string;
  /** How restgraph reaches it (`files.s3`). */
  settings: S3Settings;
  /** A client of the server, to look at the bucket beside restgraph. */
  client: S3Client;
  /** The keys of the objects under `prefix` (the prefix cut off), in order. */
  keys(prefix: string): Promise<string[]>;
  /** Writes an object, as something other than restgraph would. */
  putObject(key: string, body: string): Promise<void>;
  /** Makes an object look `hours` old (s3rver keeps each object as a file and reports its modification time). */
  age(key: string, hours: number): void;
  close(): Promise<void>;
}

const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startS3Server(name = 'restgraph-files'): Promise<TestBucket> {
  const dir = tempDir('restgraph-s3-');
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir.path, configureBuckets: [{ name }] });
  const { port } = await server.run();
  const settings: S3Settings = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: CREDENTIALS };
  const client = new S3Client({ ...settings, forcePathStyle: true });
  return {
    name,
    settings,
    client,
    async keys(prefix) {
      const keys: string[] = [];
      for await (const page of paginateListObjectsV2({ client }, { Bucket: name, Prefix: prefix })) {
        for (const object of page.Contents ?? []) keys.push((object.Key ?? '').slice(prefix.length));
      }
      return keys;
    },
    async putObject(key, body) {
      await client.send(new PutObjectCommand({ Bucket: name, Key: key, Body: body }));
    },
    age(key, hours) {
      const when = new Date(Date.now() - hours * 3600_000);
      const parts = key.split('/');
      const last = parts.pop() ?? '';
      utimesSync(join(dir.path, name, ...parts, `${last}._S3rver_object`), when, when);
    },
    async close() {
      client.destroy();
      await server.close();
      dir.cleanup();
    },
  };
}
