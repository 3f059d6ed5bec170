import { pipeline, type Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, paginateListObjectsV2, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { FileStorage, StoredFileInfo } from '../core/file-storage.js';
import { isFileKey, isStorageKey } from '../core/file-fields.js';
import { ConfigError } from '../errors.js';
import type { S3Location, S3Settings } from './s3-settings.js';
import { ByteLimit } from './byte-limit.js';

/** Parts of a multipart upload: S3's smallest. With two in flight, an upload holds at most about 10 MiB whatever the file's size. */
const PART_SIZE = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/**
 * File storage in an S3-compatible bucket (docs/files.md#s3): the file under `key` is the object
 * `<prefix><key>`, its derived files (`<key>.<variant>`) the objects beside it. Uploads are
 * streamed (a single PUT under 5 MiB, a multipart upload above, aborted on failure), so an object
 * is complete or absent; several restgraph instances can share the bucket.
 */
export class S3FileStorage implements FileStorage {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly description: string;

  readonly #option: string;

  /** `option` names the setting that gave the bucket, in start-up errors. */
  constructor(location: S3Location, settings: S3Settings = {}, option = 'RESTGRAPH_FILES_URL') {
    this.#option = option;
    this.#bucket = location.bucket;
    this.#prefix = location.prefix;
    this.#client = new S3Client(clientConfig(settings));
    const at = settings.endpoint === undefined ? '' : ` at ${new URL(settings.endpoint).origin}`;
    this.description = `the S3 bucket ${location.bucket}${location.prefix === '' ? '' : ` under ${location.prefix}`}${at}`;
  }

  /** Checks that the bucket can be reached with the credentials given: a clear start-up error, not a failure at the first upload. */
  async open(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (error) {
      this.#client.destroy();
      throw new ConfigError(this.#option, `cannot reach ${this.description}: ${reasonOf(error)}`);
    }
  }

  async put(key: string, body: Readable, options: { maxBytes: number; tooLarge: () => Error }): Promise<{ size: number }> {
    const counter = new ByteLimit(options.maxBytes, options.tooLarge);
    let failure: unknown;
    // The body's failure, or the limit's, is the one reported (not the upload's abort that follows it).
    counter.once('error', (error) => (failure ??= error));
    const counted = pipeline(body, counter, () => undefined);
    const upload = new Upload({ client: this.#client, params: { Bucket: this.#bucket, Key: this.#objectKey(key), Body: counted }, partSize: PART_SIZE, queueSize: PARTS_IN_FLIGHT, leavePartsOnError: false });
    try {
      await upload.done();
      return { size: counter.bytes };
    } catch (error) {
      counter.destroy(); // and, through the pipeline, the body: nothing more is read for this upload
      // Keys are never reused: whatever exists under this one is this upload's.
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) })).catch(() => undefined);
      throw failure ?? error;
    }
  }

  async stat(key: string): Promise<StoredFileInfo | undefined> {
    if (!isStorageKey(key)) return undefined;
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }));
      return { size: head.ContentLength ?? 0, modified: head.LastModified ?? new Date(0) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable | undefined> {
    if (!isStorageKey(key)) return undefined;
    try {
      const object = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key), ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }) }));
      // In Node the body is the response's stream (an IncomingMessage).
      return object.Body as Readable | undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    if (!isStorageKey(key)) return;
    if (isFileKey(key)) {
      // Its derived files (thumbnails) first: the objects `<key>.<variant>` beside it.
      for await (const page of paginateListObjectsV2({ client: this.#client }, { Bucket: this.#bucket, Prefix: this.#objectKey(`${key}.`) })) {
        for (const object of page.Contents ?? []) {
          if (object.Key !== undefined && isStorageKey(object.Key.slice(this.#prefix.length))) await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: object.Key }));
        }
      }
    }
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }));
  }

  async *list(): AsyncIterable<{ key: string; modified: Date }> {
    // S3 lists in key order, so a file's derived files (`<key>.<variant>`) come right after it and
    // go with it. A derived file listed apart from its file is held, and listed at the end when
    // its file is indeed gone (a server that orders otherwise costs a HEAD per derived file).
    let lastFile: string | undefined;
    const held = new Map<string, Date>();
    for await (const page of paginateListObjectsV2({ client: this.#client, pageSize: 1000 }, { Bucket: this.#bucket, Prefix: this.#prefix })) {
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(this.#prefix.length) ?? '';
        const modified = object.LastModified ?? new Date(0);
        if (isFileKey(key)) {
          lastFile = key;
          yield { key, modified };
        } else if (isStorageKey(key) && baseOf(key) !== lastFile) {
          held.set(key, modified);
        }
      }
    }
    for (const [key, modified] of held) {
      if ((await this.stat(baseOf(key))) === undefined) yield { key, modified };
    }
  }

  async url(key: string, options: { expiresInSeconds: number; type: string; disposition: string }): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.#bucket,
      Key: this.#objectKey(key),
      ResponseContentType: options.type,
      ResponseContentDisposition: options.disposition,
      ResponseCacheControl: 'private, no-cache',
    });
    return getSignedUrl(this.#client, command, { expiresIn: options.expiresInSeconds });
  }

  close(): Promise<void> {
    this.#client.destroy();
    return Promise.resolve();
  }

  #objectKey(key: string): string {
    if (!isStorageKey(key) && !(key.endsWith('.') && isFileKey(key.slice(0, -1)))) throw new Error(`not a file key: ${key}`);
    return `${this.#prefix}${key}`;
  }
}

/** The file a derived file (`<key>.<variant>`) derives from. */
function baseOf(derived: string): string {
  return derived.slice(0, derived.indexOf('.'));
}

function clientConfig(settings: S3Settings): S3ClientConfig {
  const config: S3ClientConfig = {};
  if (settings.endpoint !== undefined) {
    config.endpoint = settings.endpoint;
    // S3-compatible services vary in the integrity checksums they take: send them only where S3 requires them.
    config.requestChecksumCalculation = 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  const region = settings.region ?? (settings.endpoint === undefined ? undefined : 'us-east-1');
  if (region !== undefined) config.region = region;
  config.forcePathStyle = settings.forcePathStyle ?? settings.endpoint !== undefined;
  if (settings.credentials !== undefined) config.credentials = settings.credentials;
  return config;
}

function isMissing(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, $metadata } = error as { name?: unknown; $metadata?: { httpStatusCode?: number } };
  return name === 'NotFound' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404;
}

/** What went wrong reaching the bucket, for the start-up error (a status and S3's code, or the network's). */
function reasonOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { name, message, $metadata } = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = $metadata?.httpStatusCode;
  if (status === 404) return 'no such bucket (404)';
  if (status === 403) return 'access denied (403): check the credentials and the bucket policy';
  if (status === 301) return 'the bucket is in another region (301): set AWS_REGION';
  const text = message === undefined || message === '' || message === 'UnknownError' ? name ?? 'unknown error' : message;
  return status === undefined ? text : `${text} (${status})`;
}

