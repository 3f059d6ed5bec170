import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { acceptsType, fileLimits } from '../schema/file-field.js';
import type { FieldModel } from '../schema/schema-model.js';
import type { FileStorage } from '../core/file-storage.js';
import { newFileKey, type FileValue } from '../core/file-fields.js';
import type { UploadBudget } from '../core/upload-budget.js';
import { sanitizeFileName } from './file-names.js';
import { checkImageSize, isThumbnailable, unknownDimensions } from './image-files.js';
import { endWithSource } from './upload-source.js';

/** Bytes read back from storage to find an image's dimensions its first 4 KB did not hold. */
const IMAGE_HEADER_BYTES = 1024 ** 2;

/** Bytes read before storing anything, to tell the media type (file-type's sample size). */
export const SNIFF_BYTES = 4100;

/** Types a client may name for a file that has no magic number but is text. */
const TEXT_TYPES = /^(text\/[a-z0-9.+-]+|application\/(json|xml|[a-z0-9.+-]+\+(json|xml))|image\/svg\+xml)$/;

export interface UploadInput {
  /** The request body, streamed. */
  body: Readable;
  /** The client's name for the file (sanitised here). */
  name: string | undefined;
  /** The client's `Content-Type`: only a hint for text, never trusted for binary files. */
  claimedType: string | undefined;
  /** The declared length, when the client sent one: refused at once past the limit. */
  declaredLength: number | undefined;
  /** Where the file will be downloaded from, given its key. */
  urlOf: (key: string) => string;
  /**
   * The upload byte budget of the request's credential (RateLimits.uploadBudget), or undefined
   * when uploads have none: every caller says which, so no upload path goes uncounted.
   */
  budget: UploadBudget | undefined;
}

/**
 * Streams an upload into storage (docs/files.md#upload): the media type from the first bytes
 * (415 when the field does not accept it, before anything is stored), the size counted while
 * streaming (413 past maxSize, nothing left behind). Memory holds the first 4 KB and the chunks
 * in flight, whatever the size. @returns the file's value, stored under a new key
 */
export async function receiveFile(storage: FileStorage, field: FieldModel, input: UploadInput): Promise<FileValue> {
  const limits = fileLimits(field);
  const tooLarge = (): Error => new PayloadTooLargeError(`The file is larger than ${field.name}'s maximum of ${limits.maxSize} bytes.`);
  if (input.declaredLength !== undefined && input.declaredLength > limits.maxSize) {
    input.body.resume(); // drained, so the connection can answer; lingering-close ends it
    throw tooLarge();
  }
  // A budget already spent (or too small for the declared length) refuses before a byte is read.
  await input.budget?.check(input.declaredLength);
  const head = await readHead(input.body, SNIFF_BYTES);
  const type = await sniffType(head.bytes, input.claimedType);
  if (!acceptsType(limits.accept, type)) {
    throw new UnsupportedMediaTypeError(`${field.name} takes ${limits.accept?.join(', ') ?? ''}; this file is ${type} (told by its content, not its Content-Type).`);
  }
  // An image bomb (50,000 × 50,000 pixels in a few KB) is refused from its header, before storing.
  const sized = isThumbnailable(type) ? await checkImageSize(field.name, head.bytes) : true;
  const key = newFileKey();
  // The head, then the rest of the body piped on: when storage stops (the size limit), the pipe
  // ends and the body is left unread, for the connection to close once the answer is out.
  const body = input.budget === undefined ? new PassThrough() : new BudgetMeter(input.budget);
  body.write(head.bytes);
  // A body whose last bytes were in the head may have ended since (while the type was sniffed): piping it would wait for an 'end' already past.
  if (head.done || input.body.readableEnded) body.end();
  else input.body.pipe(body);
  // pipe() forwards neither an error nor a close: a client gone mid-body must end the upload (its temporary file removed).
  const stop = endWithSource(input.body, body);
  const { size } = await storage.put(key, body, { maxBytes: limits.maxSize, tooLarge }).finally(() => {
    stop();
    input.body.unpipe(body);
  });
  if (!sized) await checkStoredImageSize(storage, field, key, size);
  return { name: sanitizeFileName(input.name ?? 'file'), type, size, url: input.urlOf(key), etag: `"${key}"` };
}

/** The pixel check of an image whose dimensions come after its first 4 KB: read from its first megabyte in storage; refused, it is deleted. */
async function checkStoredImageSize(storage: FileStorage, field: FieldModel, key: string, size: number): Promise<void> {
  const stream = size === 0 ? undefined : await storage.get(key, { start: 0, end: Math.min(size, IMAGE_HEADER_BYTES) - 1 });
  if (stream === undefined) return;
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  try {
    // Still unknown: its pixel count cannot be checked, so it is refused rather than kept unchecked.
    if (!(await checkImageSize(field.name, Buffer.concat(parts)))) throw unknownDimensions(field.name);
  } catch (error) {
    await storage.delete(key).catch(() => undefined);
    throw error;
  }
}

/** Bytes counted against an upload budget at a time: one counter update per MiB streamed (and one for the rest at the end). */
const BYTES_PER_CHARGE = 1024 ** 2;

/**
 * Passes a file's bytes on to storage once they are counted against the upload budget, a MiB at
 * a time and the rest at the end; when they do not fit it fails with the 429, so storage stops and
 * removes the partial file. A file is stored only when all its bytes were counted.
 */
class BudgetMeter extends Transform {
  readonly #budget: UploadBudget;
  #pending = 0;

  constructor(budget: UploadBudget) {
    super();
    this.#budget = budget;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#pending += chunk.length;
    if (this.#pending < BYTES_PER_CHARGE) {
      callback(null, chunk);
      return;
    }
    this.#charge(() => callback(null, chunk), callback);
  }

  override _flush(callback: TransformCallback): void {
    this.#charge(() => callback(), callback);
  }

  #charge(then: () => void, fail: (error: Error) => void): void {
    const bytes = this.#pending;
    this.#pending = 0;
    let charged: Promise<void> | undefined;
    try {
      charged = this.#budget.charge(bytes);
    } catch (error) {
      fail(error as Error);
      return;
    }
    if (charged === undefined) then();
    else charged.then(then, fail);
  }
}

interface Head {
  bytes: Buffer;
  /** The stream ended within the head. */
  done: boolean;
}

/** Reads the body's first `size` bytes (or all of a shorter body), then pauses it: nothing more is read until it is piped on. */
function readHead(body: Readable, size: number): Promise<Head> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let length = 0;
    const finish = (done: boolean): void => {
      body.pause();
      body.off('data', onData).off('end', onEnd).off('error', onError);
      resolve({ bytes: Buffer.concat(parts), done });
    };
    const onData = (chunk: Buffer): void => {
      parts.push(chunk);
      length += chunk.length;
      if (length >= size) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onError = (error: Error): void => {
      body.off('data', onData).off('end', onEnd);
      reject(error);
    };
    body.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/**
 * The media type of a file from its first bytes: file-type's answer when it knows the format;
 * otherwise text (valid UTF-8, no control characters but tab, line feed, form feed and carriage
 * return) keeps the client's type when it names a text type, and is `text/plain` when not;
 * anything else is `application/octet-stream`.
 */
export async function sniffType(head: Buffer, claimed: string | undefined): Promise<string> {
  if (head.length === 0) return 'application/octet-stream';
  const known = await fileTypeFromBuffer(head).catch(() => undefined);
  if (known !== undefined) return known.mime;
  if (!looksLikeText(head)) return 'application/octet-stream';
  const hint = claimed?.split(';')[0]?.trim().toLowerCase();
  return hint !== undefined && TEXT_TYPES.test(hint) ? hint : 'text/plain';
}

function looksLikeText(head: Buffer): boolean {
  try {
    // stream: a character cut at the end of the head is not an error
    const text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    // eslint-disable-next-line no-control-regex
    return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
  } catch {
    return false;
  }
}
