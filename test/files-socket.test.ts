import { createHash, randomBytes } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { ADMIN, listenApp, tempDatabase, type ListeningApp } from './helpers/event-stream.js';
import { png } from './helpers/files.js';
import { tempDir } from './helpers/test-app.js';

/**
 * File uploads and downloads over a real socket (docs/files.md#upload), raw and as a multipart
 * FormData, with fetch's keep-alive connections; and the app's close() while they are open: it
 * ends each connection as soon as it has no request in flight, so close() never waits for Fastify's
 * keep-alive timeout (72 s). A refusal in the middle of a body (413, 415) does not hold close()
 * either: the rest of the body is read and dropped, and the connection closes after the answer.
 */

const SCHEMA = `
resources:
  users:
    fields:
      name: { type: string }
      avatar: { type: file, maxSize: 64KB, accept: [image/png, image/jpeg] }
      doc: { type: file, maxSize: 32MB }
`;

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

type User = { id: number };

/** A server on a fresh database and file directory; `run` gets it, and it is closed (awaited) and removed after. */
async function withServer(run: (server: ListeningApp) => Promise<void>): Promise<void> {
  const dir = tempDir('restgraph-files-');
  const db = await tempDatabase();
  const server = await listenApp(db.url, { schema: parseSchemaText(SCHEMA), files: { dir: dir.path } });
  let closed = false;
  try {
    await run(server);
    await server.close();
    closed = true;
  } finally {
    if (!closed) await server.close().catch(() => undefined);
    await db.cleanup();
    dir.cleanup();
  }
}

async function createUser(base: string): Promise<number> {
  const response = await fetch(`${base}/users`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: '{"name":"x"}' });
  return ((await response.json()) as User).id;
}

/** A request body streamed in `chunks` pieces of `size` bytes (chunked: no Content-Length). */
function streamed(first: Buffer, chunks: number, size = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) controller.enqueue(first);
      else if (sent <= chunks) controller.enqueue(randomBytes(size));
      else controller.close();
      sent++;
    },
  });
}

describe('file uploads over a real socket', () => {
  it('streams an upload to storage and back whole over a real socket', async () => {
    await withServer(async (server) => {
      const id = await createUser(server.base);
      // A file within the limit, streamed the same way, arrives whole.
      const bytes = png(40_000);
      const put = await fetch(`${server.base}/users/${id}/avatar`, { method: 'PUT', headers: { authorization: ADMIN, 'content-type': 'image/png' }, body: bytes });
      expect(put.status).toBe(200);
      await put.arrayBuffer();
      const got = Buffer.from(await (await fetch(`${server.base}/users/${id}/avatar`, { headers: { authorization: ADMIN } })).arrayBuffer());
      expect(sha256(got)).toBe(sha256(bytes));

      // A multipart create as a browser's FormData sends it (docs/files.md#multipart-forms).
      const body = new FormData();
      body.set('name', 'y');
      body.set('avatar', new Blob([bytes], { type: 'image/png' }), 'me.png');
      const post = await fetch(`${server.base}/users`, { method: 'POST', headers: { authorization: ADMIN }, body });
      expect(post.status).toBe(201);
      const created = (await post.json()) as User & { avatar: { url: string; name: string } };
      expect(created.avatar.name).toBe('me.png');
      const again = Buffer.from(await (await fetch(`${server.base}${created.avatar.url}`, { headers: { authorization: ADMIN } })).arrayBuffer());
      expect(sha256(again)).toBe(sha256(bytes));
      // The download's keep-alive connection is open as close() begins (awaited by withServer).
    });
  });

  it('closes while a download is still streaming: the download ends whole, then its connection closes', async () => {
    await withServer(async (server) => {
      const id = await createUser(server.base);
      // Larger than the socket buffers on both sides: the response is not finished when close() begins.
      const bytes = randomBytes(24 * 1024 * 1024);
      const put = await fetch(`${server.base}/users/${id}/doc`, { method: 'PUT', headers: { authorization: ADMIN, 'content-type': 'application/octet-stream' }, body: bytes });
      expect(put.status).toBe(200);
      await put.arrayBuffer();

      // A keep-alive client that keeps its idle connections open (Node's global agent gives them up after 5 s).
      const agent = new Agent({ keepAlive: true });
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const url = new URL(`${server.base}/users/${id}/doc`);
        httpRequest({ host: url.hostname, port: url.port, path: url.pathname, agent, headers: { authorization: ADMIN } }, resolve).on('error', reject).end();
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers.connection).toBe('keep-alive');
      const socketClosed = new Promise<void>((resolve) => response.socket.once('close', () => resolve()));
      const chunks: Buffer[] = [];
      response.pause();
      // close() begins with the response in flight: Fastify's one pass over idle connections skips it.
      const closing = server.close();
      for await (const chunk of response) chunks.push(chunk as Buffer);
      expect(sha256(Buffer.concat(chunks))).toBe(sha256(bytes));
      // Without the drain, the connection would stay open (and close() wait) for the keep-alive timeout, past the test's.
      await socketClosed;
      await closing;
      agent.destroy();
    });
  });

  it('answers 413 and 415 in the middle of a streamed body, and closes without waiting for the rest', async () => {
    await withServer(async (server) => {
      const id = await createUser(server.base);
      // 415: a PDF for an images-only field, refused after its first 4 KB; the client goes on sending 2 MB.
      const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(8192)]);
      const refused = await fetch(`${server.base}/users/${id}/avatar`, { method: 'PUT', headers: { authorization: ADMIN, 'content-type': 'image/png' }, body: streamed(pdf, 32), duplex: 'half' });
      expect(refused.status).toBe(415);
      expect(refused.headers.get('connection')).toBe('close');
      await refused.arrayBuffer();
      // 413: an image past the 64 KB maximum, refused while streaming (no length was declared).
      const big = await fetch(`${server.base}/users/${id}/avatar`, { method: 'PUT', headers: { authorization: ADMIN, 'content-type': 'image/png' }, body: streamed(png(10), 32), duplex: 'half' });
      expect(big.status).toBe(413);
      await big.arrayBuffer();
      // 413 from the declared length, before a byte of the body is read.
      const declared = await fetch(`${server.base}/users/${id}/avatar`, { method: 'PUT', headers: { authorization: ADMIN, 'content-type': 'image/png' }, body: png(1024 * 1024) });
      expect(declared.status).toBe(413);
      await declared.arrayBuffer();
      // Nothing was stored.
      const user = (await (await fetch(`${server.base}/users/${id}`, { headers: { authorization: ADMIN } })).json()) as { avatar: unknown };
      expect(user.avatar).toBeNull();
    });
  });
});
