import { Transform, type TransformCallback } from 'node:stream';

/** Passes bytes through, counting them; past the limit it fails with the error given (the storage adapters' size check). */
export class ByteLimit extends Transform {
  bytes = 0;
  readonly #max: number;
  readonly #tooLarge: () => Error;

  constructor(max: number, tooLarge: () => Error) {
    super();
    this.#max = max;
    this.#tooLarge = tooLarge;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.#max) done(this.#tooLarge());
    else done(null, chunk);
  }
}
