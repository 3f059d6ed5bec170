import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { tempDir } from './helpers/test-app.js';
import { listenApp, tempDatabase, waitUntil, type ListeningApp } from './helpers/event-stream.js';
import { bearerJwt, RULES_JWT_SECRET } from './helpers/rule-tokens.js';

/**
 * An upload the principal may not write is refused before its body is read (docs/files.md#upload),
 * over a real socket: the client sends the head and a little of a large body, and the 403 comes
 * without the rest.
 */

const SCHEMA = `
resources:
  profiles:
    access: { read: authenticated, write: authenticated }
    fields:
      name: { type: string }
      secret: { type: file, maxSize: 16MB, write: [profiles:admin] }
`;

describe('early refusals of uploads', () => {
  let server: ListeningApp;
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  let files: { path: string; cleanup: () => void };
  beforeAll(async () => {
    files = tempDir('restgraph-early-');
    db = await tempDatabase();
    server = await listenApp(db.url, { schema: parseSchemaText(SCHEMA), files: { dir: files.path }, jwt: { secret: RULES_JWT_SECRET } });
  });
  afterAll(async () => {
    await server.close();
    await db.cleanup();
    files.cleanup();
  });

  it('answers 403 to an upload to a field the principal may not write before the body is sent', async () => {
    const alice = await bearerJwt({ sub: 'alice' });
    const created = await server.app.inject({ method: 'POST', url: '/profiles', payload: {}, headers: { authorization: alice } });
    const id = (JSON.parse(created.body) as { id: number }).id;
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`PUT /profiles/${id}/secret HTTP/1.1\r\nHost: x\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: 9000000\r\n\r\n`);
    socket.write(Buffer.alloc(8192, 0x41));
    try {
      // Before: no answer until all 9,000,000 bytes had been received and stored.
      await waitUntil(() => /^HTTP\/1\.1 \d{3}/.test(answer), 'an answer before the body is sent');
      expect(answer).toMatch(/^HTTP\/1\.1 403/);
    } finally {
      socket.destroy();
    }
  });
});
