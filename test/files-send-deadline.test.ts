import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { tempDir } from './helpers/test-app.js';
import { ADMIN, listenApp, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';

/**
 * The send deadline of file downloads (docs/files.md#download), over a real socket: a client that
 * stops reading a download is disconnected once its socket has taken no bytes for
 * `files.sendTimeoutMs` (made small here), and the file is closed.
 */

const SCHEMA = `
resources:
  items:
    fields:
      any: { type: file, maxSize: 16MB }
`;

describe('file downloads to clients that stop reading', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  let files: { path: string; cleanup: () => void };
  beforeAll(async () => {
    files = tempDir('restgraph-send-deadline-');
    db = await tempDatabase();
    server = await listenApp(db.url, { schema: parseSchemaText(SCHEMA), files: { dir: files.path, sendTimeoutMs: 500 } });
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
    files.cleanup();
  });

  const connections = (): Promise<number> => new Promise((resolve, reject) => server.app.server.getConnections((error, count) => (error === null ? resolve(count) : reject(error))));

  it('closes the connection of a client that reads nothing of a 9 MB file; a reading client gets it whole', async () => {
    const created = await server.app.inject({ method: 'POST', url: '/items', payload: {} });
    const id = (JSON.parse(created.body) as { id: number }).id;
    const bytes = randomBytes(9 * 1024 * 1024);
    const put = await server.app.inject({ method: 'PUT', url: `/items/${id}/any`, payload: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.statusCode).toBe(200);

    const socket: Socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.pause(); // reads nothing: the server's writes fill the buffers and stop
    socket.write(`GET /items/${id}/any HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\n\r\n`);
    // Before: the connection (and the file's handle) stayed open as long as the client held it.
    await waitUntil(async () => (await connections()) === 1, 'the download to start');
    await waitUntil(async () => (await connections()) === 0, 'the server to close the stalled download', 30_000);
    socket.destroy();

    const download = await server.app.inject({ url: `/items/${id}/any` });
    expect(download.rawPayload.equals(bytes)).toBe(true);
  });
});
