import { ConfigError } from '../errors.js';
import type { FileStorage } from '../core/file-storage.js';

/**
 * The settings of S3-compatible file storage (docs/files.md#s3), read without loading the AWS SDK:
 * the SDK (about 200 ms and 15 MB to load) is imported only by a process that uses a bucket
 * (`openS3Storage`).
 */

/** How restgraph reaches an S3-compatible service (docs/files.md#s3); what is not given comes from the AWS SDK's usual settings. */
export interface S3Settings {
  /** `AWS_REGION`; with an endpoint and no region, `us-east-1`. */
  region?: string;
  /** `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`: a non-AWS service (MinIO, R2, Ceph, …). */
  endpoint?: string;
  /** Path-style addressing (`<endpoint>/<bucket>/<key>`): `RESTGRAPH_FILES_S3_PATH_STYLE`; defaults to true when an endpoint is given. */
  forcePathStyle?: boolean;
  /** Explicit credentials; otherwise the SDK's chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** Where `s3://bucket/prefix` points: the bucket, and the prefix of every key (empty, or ending in `/`). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX = /^[A-Za-z0-9!_.*'()/-]{0,512}$/;

/** Reads `RESTGRAPH_FILES_URL` (`s3://bucket` or `s3://bucket/some/prefix`). @throws ConfigError naming the setting */
export function parseS3Url(url: string, option = 'RESTGRAPH_FILES_URL'): S3Location {
  const match = /^s3:\/\/([^/]*)\/?(.*)$/.exec(url.trim());
  const bucket = match?.[1] ?? '';
  const path = (match?.[2] ?? '').replace(/\/+$/, '');
  if (!BUCKET.test(bucket)) throw new ConfigError(option, `must be s3://<bucket>/<prefix> with a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens, not "${url}"`);
  if (!PREFIX.test(path) || (path !== '' && path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))) {
    throw new ConfigError(option, `has a prefix S3 keys cannot safely start with: "${path}" (letters, digits and !_.*'()- between slashes)`);
  }
  return { bucket, prefix: path === '' ? '' : `${path}/` };
}

/**
 * How S3 is reached, from the environment: `AWS_REGION` (or `AWS_DEFAULT_REGION`),
 * `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`) and `RESTGRAPH_FILES_S3_PATH_STYLE`; credentials
 * are the AWS SDK's own (environment, profiles, roles).
 * @throws ConfigError naming the setting that is malformed
 */
export function s3SettingsFromEnv(env: Readonly<Record<string, string | undefined>>): S3Settings {
  const nonEmpty = (text: string | undefined): text is string => text !== undefined && text.trim() !== '';
  const s3: S3Settings = {};
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (nonEmpty(region)) s3.region = region;
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  if (nonEmpty(endpoint)) {
    if (!/^https?:\/\/[^/]/.test(endpoint)) throw new ConfigError(nonEmpty(env.AWS_ENDPOINT_URL_S3) ? 'AWS_ENDPOINT_URL_S3' : 'AWS_ENDPOINT_URL', `must be an http:// or https:// URL, not "${endpoint}"`);
    s3.endpoint = endpoint;
  }
  const pathStyle = env.RESTGRAPH_FILES_S3_PATH_STYLE;
  if (nonEmpty(pathStyle)) {
    if (pathStyle !== 'true' && pathStyle !== 'false' && pathStyle !== '1' && pathStyle !== '0') throw new ConfigError('RESTGRAPH_FILES_S3_PATH_STYLE', `must be true or false, not "${pathStyle}"`);
    s3.forcePathStyle = pathStyle === 'true' || pathStyle === '1';
  }
  return s3;
}

/** The S3 storage at `location`, with the AWS SDK loaded now (not by processes that never use a bucket). */
export async function openS3Storage(location: S3Location, settings: S3Settings, option = 'RESTGRAPH_FILES_URL'): Promise<FileStorage & { open(): Promise<void> }> {
  const { S3FileStorage } = await import('./s3-file-storage.js');
  return new S3FileStorage(location, settings, option);
}
