import type { FastifyInstance } from 'fastify';
import { BrowserAssets } from './browser-assets.js';

/** What the HTML pages put in their head: the icon below (browsers otherwise ask for it anyway). */
export const FAVICON_LINK = '<link rel="icon" href="/favicon.ico">';

/**
 * restgraph's icon, 16×16: three nodes of a graph on a blue rounded square. `.` is transparent,
 * `#` the blue, `o` white. It is built into an ICO here, so no binary file is kept in the repository.
 */
const PIXELS = [
  '.##############.',
  '################',
  '##ooo######ooo##',
  '##oooooooooooo##',
  '##ooo######ooo##',
  '###o########o###',
  '####o######o####',
  '#####o####o#####',
  '######o##o######',
  '#######oo#######',
  '######oooo######',
  '######oooo######',
  '######oooo######',
  '################',
  '################',
  '.##############.',
];

/** Blue, green, red, alpha (a BMP's byte order) of each pixel letter. */
const COLOURS: Readonly<Record<string, readonly [number, number, number, number]>> = {
  '.': [0, 0, 0, 0],
  '#': [0xeb, 0x63, 0x25, 0xff],
  o: [0xff, 0xff, 0xff, 0xff],
};

/**
 * An ICO file of one 32-bit image: the directory (6 bytes), its entry (16), a BITMAPINFOHEADER
 * (40, height doubled for the mask), the pixels bottom-up in BGRA, and the 1-bit transparency
 * mask (rows padded to 4 bytes).
 */
function iconFile(pixels: readonly string[]): Buffer {
  const size = pixels.length;
  const maskRow = Math.ceil(size / 32) * 4;
  const image = 40 + size * size * 4 + size * maskRow;
  const file = Buffer.alloc(6 + 16 + image);
  file.writeUInt16LE(1, 2);
  file.writeUInt16LE(1, 4);
  file.writeUInt8(size, 6);
  file.writeUInt8(size, 7);
  file.writeUInt16LE(1, 10);
  file.writeUInt16LE(32, 12);
  file.writeUInt32LE(image, 14);
  file.writeUInt32LE(22, 18);
  file.writeUInt32LE(40, 22);
  file.writeInt32LE(size, 26);
  file.writeInt32LE(size * 2, 30);
  file.writeUInt16LE(1, 34);
  file.writeUInt16LE(32, 36);
  file.writeUInt32LE(image - 40, 42);
  const pixelStart = 22 + 40;
  const maskStart = pixelStart + size * size * 4;
  pixels.forEach((line, y) => {
    const row = size - 1 - y;
    for (let x = 0; x < size; x++) {
      const colour = COLOURS[line.charAt(x)] ?? COLOURS['.'] ?? [0, 0, 0, 0];
      file.set(colour, pixelStart + (row * size + x) * 4);
      const maskByte = maskStart + row * maskRow + (x >> 3);
      if (colour[3] === 0) file.writeUInt8(file.readUInt8(maskByte) | (0x80 >> (x & 7)), maskByte);
    }
  });
  return file;
}

const ICON = new BrowserAssets({ 'favicon.ico': { bytes: iconFile(PIXELS), type: 'image/x-icon' } }, 'No such icon.');

/** `GET /favicon.ico`, to anyone: every browser asks for it on every page it shows. */
export function registerFavicon(app: FastifyInstance): void {
  app.get('/favicon.ico', async (request, reply) => ICON.send(request, reply, 'favicon.ico'));
}
