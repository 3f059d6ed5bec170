import { connect, type Socket } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { tempDir } from './helpers/test-app.js';
import { ADMIN, listenApp, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { png } from './helpers/files.js';

/**
 * Uploads whose client goes away mid-body (docs/files.md#upload), over a real socket: the
 * temporary file is removed and its handle closed, on raw (fixed length and chunked) and
 * multipart uploads; the handler ends, so later uploads work as before.
 */

const SCHEMA = `
resources:
  items:
    fields:
      title: { type: string }
      any: { type: file, maxSize: 8MB }
`;

describe('aborted uploads', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  let files: { path: string; cleanup: () => void };
  const temporary = (): string[] => (existsSync(join(files.path, 'tmp')) ? readdirSync(join(files.path, 'tmp')) : []);

  beforeAll(async () => {
    files = tempDir('restgraph-aborts-');
    db = await tempDatabase();
    server = await listenApp(db.url, { schema: parseSchemaText(SCHEMA), files: { dir: files.path } });
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
    files.cleanup();
  });

  const newItem = async (): Promise<number> => {
    const response = await server.app.inject({ method: 'POST', url: '/items', payload: { title: 'x' } });
    return (JSON.parse(response.body) as { id: number }).id;
  };

  /** Sends a request head and part of its body, waits until storage holds the temporary file, then destroys the socket. */
  const abortAfterPart = async (head: string, part: Buffer): Promise<void> => {
    const socket: Socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(head);
    socket.write(part);
    await waitUntil(() => temporary().length > 0, 'the upload to reach storage');
    socket.destroy();
  };

  const rawHead = (id: number, framing: string): string =>
    `PUT /items/${id}/any HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/octet-stream\r\n${framing}\r\n\r\n`;

  it('removes the temporary file of a raw upload with a Content-Length whose client went away', async () => {
    const id = await newItem();
    await abortAfterPart(rawHead(id, 'Content-Length: 1000000'), png(20_000));
    // Before: the pipe never ended; the temporary file (and its handle) stayed until a restart.
    await waitUntil(() => temporary().length === 0, 'the temporary file to be removed');
  });

  it('removes the temporary file of a chunked raw upload whose client went away', async () => {
    const id = await newItem();
    const chunk = png(20_000);
    await abortAfterPart(rawHead(id, 'Transfer-Encoding: chunked'), Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    await waitUntil(() => temporary().length === 0, 'the temporary file to be removed');
  });

  it('removes the temporary file of a multipart file part whose client went away', async () => {
    const id = await newItem();
    const boundary = 'XBOUNDARY';
    const head = `PATCH /items/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 2000000\r\n\r\n`;
    const part = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="any"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`), png(50_000)]);
    await abortAfterPart(head, part);
    await waitUntil(() => temporary().length === 0, 'the temporary file to be removed');
  });

  it('still takes whole uploads afterwards', async () => {
    const id = await newItem();
    const bytes = png(1000);
    const response = await fetch(`${server.base}/items/${id}/any`, { method: 'PUT', body: bytes, headers: { authorization: ADMIN, 'content-type': 'application/octet-stream' } });
    expect(response.status).toBe(200);
    const download = await fetch(`${server.base}/items/${id}/any`, { headers: { authorization: ADMIN } });
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    expect(temporary()).toEqual([]);
  });
});
