import { Readable } from 'node:stream';
import sharp from 'sharp';
import { BadRequestError, NotFoundError, ValidationError } from '../errors.js';
import { fileLimits, parseThumbSize } from '../schema/file-field.js';
import type { FieldModel } from '../schema/schema-model.js';
import type { FileStorage, StoredFileInfo } from '../core/file-storage.js';
import { derivedKey, keyOf, type FileValue } from '../core/file-fields.js';
import { checkJpegScans, FailedRenders, isRenderTimeout, MAX_WAITING_RENDERS, RENDER_TIMEOUT_SECONDS, rendersBusy } from './render-guards.js';

/**
 * Images of file fields (docs/files.md#thumbnails): the pixel limit that refuses image bombs at
 * upload, and thumbnails rendered once with sharp and kept in storage beside their file.
 */

/** The most pixels an image may have: larger ones are refused at upload and never decoded. 100 megapixels. */
export const MAX_IMAGE_PIXELS = 100_000_000;
/** The largest file a thumbnail is rendered from (sharp reads its input whole). */
export const MAX_THUMBNAIL_SOURCE_BYTES = 64 * 1024 ** 2;
/** Thumbnails rendered at once in this process; more wait their turn. */
const RENDERS_AT_ONCE = 2;

/** The image types thumbnails are made of, and the type of their thumbnails. */
const THUMBNAIL_OUTPUT: ReadonlyMap<string, { format: 'png' | 'jpeg' | 'webp'; type: string; extension: string }> = new Map([
  ['image/png', { format: 'png', type: 'image/png', extension: 'png' }],
  ['image/gif', { format: 'png', type: 'image/png', extension: 'png' }],
  ['image/jpeg', { format: 'jpeg', type: 'image/jpeg', extension: 'jpg' }],
  ['image/webp', { format: 'webp', type: 'image/webp', extension: 'webp' }],
  ['image/avif', { format: 'webp', type: 'image/webp', extension: 'webp' }],
]);

/** Whether files of `type` have thumbnails (and their dimensions are checked at upload). */
export function isThumbnailable(type: string): boolean {
  return THUMBNAIL_OUTPUT.has(type);
}

/**
 * Refuses (422) an image with more than MAX_IMAGE_PIXELS pixels, read from its header only
 * (nothing is decoded). @returns false when `bytes` do not reach the dimensions (a JPEG with
 * long metadata before its frame header), so the caller can try with more bytes
 */
export async function checkImageSize(fieldName: string, bytes: Buffer): Promise<boolean> {
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata().catch(() => undefined);
  if (meta === undefined) return false;
  if (meta.width * meta.height > MAX_IMAGE_PIXELS) {
    throw new ValidationError(`The image is ${meta.width} × ${meta.height} pixels, more than the ${MAX_IMAGE_PIXELS} pixels an image may have.`, {
      errors: [{ pointer: `/${fieldName}`, detail: `has at most ${MAX_IMAGE_PIXELS} pixels` }],
    });
  }
  return true;
}

/** The refusal (422) of an image whose dimensions are not in its first megabyte: its pixel count cannot be checked. */
export function unknownDimensions(fieldName: string): ValidationError {
  return new ValidationError('The image\'s dimensions are not in its first megabyte, so its pixel count cannot be checked.', {
    errors: [{ pointer: `/${fieldName}`, detail: 'has its dimensions in its first megabyte' }],
  });
}

/** A thumbnail as the download route sends it. */
export interface Thumbnail {
  /** Its storage key (`<file key>.<size>`). */
  key: string;
  /** What the download headers show: its name, type and entity tag. */
  file: FileValue;
  /** What storage said of a thumbnail kept from before (the download need not ask again); undefined when rendered now. */
  stored: StoredFileInfo | undefined;
}

/** Renders thumbnails on first request and keeps them; later requests read the kept one. */
export class Thumbnails {
  readonly #storage: FileStorage;
  /** Renders under way, by key: two requests for the same thumbnail render it once. */
  readonly #rendering = new Map<string, Promise<void>>();
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #failed = new FailedRenders();

  readonly #maxWaiting: number;

  /** `maxWaiting`: renders that may wait for a place before more are refused (503). */
  constructor(storage: FileStorage, maxWaiting = MAX_WAITING_RENDERS) {
    this.#storage = storage;
    this.#maxWaiting = maxWaiting;
  }

  /**
   * The thumbnail of `file` at `size` (`?thumb=`), rendered if not kept yet. A size the field
   * does not list, or a file that is not an image, is a 400; an image sharp cannot read a 422.
   */
  async get(field: FieldModel, file: FileValue, size: string): Promise<Thumbnail> {
    const { thumbs } = fileLimits(field);
    const dimensions = parseThumbSize(size);
    if (dimensions === undefined || !thumbs.includes(size)) {
      throw new BadRequestError(`${field.name} has thumbnails of the sizes ${thumbs.join(', ')}; not ${size.slice(0, 32)}.`);
    }
    const output = THUMBNAIL_OUTPUT.get(file.type);
    if (output === undefined) {
      throw new BadRequestError(`Thumbnails are made of ${[...THUMBNAIL_OUTPUT.keys()].join(', ')} images; this file is ${file.type}.`);
    }
    const source = keyOf(file) ?? '';
    const key = derivedKey(source, size);
    const stem = file.name.replace(/\.[^.]*$/, '');
    const thumbnail = { key, file: { name: `${stem}-${size}.${output.extension}`, type: output.type, size: 0, url: file.url, etag: `"${key}"` } };
    this.#failed.check(key);
    const stored = await this.#storage.stat(key);
    if (stored !== undefined) return { ...thumbnail, stored };
    let render = this.#rendering.get(key);
    if (render === undefined) {
      render = this.#queued(() => this.#render(source, key, file, dimensions, output.format))
        .catch((error: unknown) => {
          this.#failed.remember(key, error);
          throw error;
        })
        .finally(() => this.#rendering.delete(key));
      this.#rendering.set(key, render);
    }
    await render;
    return { ...thumbnail, stored: undefined };
  }

  async #render(source: string, key: string, file: FileValue, size: { width: number; height: number; crop: boolean }, format: 'png' | 'jpeg' | 'webp'): Promise<void> {
    if (file.size > MAX_THUMBNAIL_SOURCE_BYTES) throw new ValidationError(`Thumbnails are made of images up to ${MAX_THUMBNAIL_SOURCE_BYTES} bytes; this one has ${file.size}.`);
    const stream = await this.#storage.get(source);
    if (stream === undefined) throw new NotFoundError('The file is not in storage.');
    const input = await readAll(stream, MAX_THUMBNAIL_SOURCE_BYTES);
    checkJpegScans(file.type, input);
    let output: Buffer;
    try {
      // The pixel limit is checked from the header, before any pixel is decoded; the timeout stops libvips itself.
      output = await sharp(input, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' })
        .timeout({ seconds: RENDER_TIMEOUT_SECONDS })
        .rotate()
        .resize(size.width, size.height, size.crop ? { fit: 'cover', position: 'centre' } : { fit: 'inside', withoutEnlargement: true })
        .toFormat(format)
        .toBuffer();
    } catch (error) {
      const detail = isRenderTimeout(error)
        ? `takes longer than ${RENDER_TIMEOUT_SECONDS} s to render`
        : error instanceof Error && /pixel limit/i.test(error.message)
          ? `has more than ${MAX_IMAGE_PIXELS} pixels`
          : 'cannot be read as an image';
      throw new ValidationError(`No thumbnail: the file ${detail}.`);
    }
    await this.#storage.put(key, Readable.from([output]), { maxBytes: Number.MAX_SAFE_INTEGER, tooLarge: () => new Error('unreachable') });
  }

  /** Runs `work` when fewer than RENDERS_AT_ONCE renders are running. */
  async #queued<T>(work: () => Promise<T>): Promise<T> {
    // A finished render hands its place to the next waiting one (running stays counted).
    if (this.#running >= RENDERS_AT_ONCE) {
      if (this.#waiting.length >= this.#maxWaiting) throw rendersBusy();
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    else this.#running++;
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#running--;
      else next();
    }
  }
}

async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const part = chunk as Buffer;
    length += part.length;
    if (length > max) {
      stream.destroy();
      throw new ValidationError(`Thumbnails are made of images up to ${max} bytes.`);
    }
    parts.push(part);
  }
  return Buffer.concat(parts);
}
