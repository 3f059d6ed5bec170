import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyReply } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseBatches, type SendContinuation } from '../src/app/response-batches.js';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';

/**
 * Responses are held until the end of the event-loop turn that made them and then sent together
 * (src/app/response-batches.ts): in order, each once, never more than the limit held, and a
 * response Node refuses to write becomes a logged 500 instead of a crash.
 */

const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A stand-in reply: ResponseBatches reads and sets only its sendHeld mark. */
const fakeReply = (): FastifyReply => ({ sendHeld: false }) as unknown as FastifyReply;

/** Puts batches in the state of a busy server: a turn made two responses, so the next turn's are held. */
async function makeBusy(batches: ResponseBatches): Promise<void> {
  batches.hold(fakeReply(), 'busy 1', () => undefined);
  batches.hold(fakeReply(), 'busy 2', () => undefined);
  await endOfTurn();
  expect(batches.holding).toBe(true);
}

describe('ResponseBatches', () => {
  it('sends a lone response at once: turns that make one response each hold nothing', async () => {
    const sent: unknown[] = [];
    const batches = new ResponseBatches(16, () => undefined);
    const next: SendContinuation = (_error, payload) => void sent.push(payload);
    for (const payload of ['a', 'b', 'c']) {
      batches.hold(fakeReply(), payload, next);
      expect(sent.at(-1)).toBe(payload);
      expect(batches.holding).toBe(false);
      await endOfTurn();
    }
    expect(sent).toEqual(['a', 'b', 'c']);
  });

  it('once a turn makes more than one response, holds the next turns\' until their end, then sends them in order', async () => {
    const sent: unknown[] = [];
    const batches = new ResponseBatches(16, () => undefined);
    const next: SendContinuation = (_error, payload) => void sent.push(payload);
    // The first busy turn is sent as it comes: the server did not know yet.
    batches.hold(fakeReply(), 1, next);
    batches.hold(fakeReply(), 2, next);
    expect(sent).toEqual([1, 2]);
    await endOfTurn();
    for (const payload of [3, 4, 5]) batches.hold(fakeReply(), payload, next);
    expect(sent).toEqual([1, 2]);
    expect(batches.held).toBe(3);
    await endOfTurn();
    expect(sent).toEqual([1, 2, 3, 4, 5]);
    expect(batches.held).toBe(0);
    // Still busy: a turn's lone response is held too; after that turn, lone responses go at once.
    batches.hold(fakeReply(), 6, next);
    expect(sent).toEqual([1, 2, 3, 4, 5]);
    await endOfTurn();
    expect(sent).toEqual([1, 2, 3, 4, 5, 6]);
    expect(batches.holding).toBe(false);
    batches.hold(fakeReply(), 7, next);
    expect(sent).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('sends at once the batch a response fills, and holds no more than the limit', async () => {
    const sent: unknown[] = [];
    const batches = new ResponseBatches(3, () => undefined);
    await makeBusy(batches);
    const next: SendContinuation = (_error, payload) => void sent.push(payload);
    batches.hold(fakeReply(), 1, next);
    batches.hold(fakeReply(), 2, next);
    expect(sent).toEqual([]);
    batches.hold(fakeReply(), 3, next);
    expect(sent).toEqual([1, 2, 3]);
    batches.hold(fakeReply(), 4, next);
    expect(batches.held).toBe(1);
    await endOfTurn();
    expect(sent).toEqual([1, 2, 3, 4]);
  });

  it('with a limit of 1 sends every response at once, busy or not', async () => {
    const sent: unknown[] = [];
    const batches = new ResponseBatches(1, () => undefined);
    await makeBusy(batches);
    batches.hold(fakeReply(), 'x', (_error, payload) => void sent.push(payload));
    expect(sent).toEqual(['x']);
  });

  it('sends a reply once: a second send of the same reply is ignored, held or not', async () => {
    const sent: unknown[] = [];
    const batches = new ResponseBatches(16, () => undefined);
    const next: SendContinuation = (_error, payload) => void sent.push(payload);
    const lone = fakeReply();
    batches.hold(lone, 'lone', next);
    batches.hold(lone, undefined, next);
    await endOfTurn();
    await makeBusy(batches);
    const held = fakeReply();
    batches.hold(held, 'held', next);
    batches.hold(held, undefined, next);
    await endOfTurn();
    batches.hold(held, 'after', next);
    await endOfTurn();
    expect(sent).toEqual(['lone', 'held']);
  });

  it('tells of a response that fails to go out, with its reply, and still sends the others', async () => {
    const sent: unknown[] = [];
    const failures: [FastifyReply, unknown][] = [];
    const batches = new ResponseBatches(16, (reply, error) => failures.push([reply, error]));
    const refuse = (): void => {
      throw new TypeError('Invalid character in header content');
    };
    // At once (not busy) and held (busy).
    const lone = fakeReply();
    batches.hold(lone, 0, refuse);
    await endOfTurn();
    await makeBusy(batches);
    const held = fakeReply();
    batches.hold(fakeReply(), 1, (_error, payload) => void sent.push(payload));
    batches.hold(held, 2, refuse);
    batches.hold(fakeReply(), 3, (_error, payload) => void sent.push(payload));
    await endOfTurn();
    expect(sent).toEqual([1, 3]);
    expect(failures.map(([reply]) => reply)).toEqual([lone, held]);
    expect(String(failures[1]?.[1])).toContain('Invalid character');
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new ResponseBatches(limit, () => undefined)).toThrow(RangeError);
    }
  });
});

describe('responses held to the end of the turn, over HTTP', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** Sends raw bytes on one connection and resolves with everything read until `until` has been read. */
  const exchange = (port: number, bytes: string, until: (text: string) => boolean): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`timed out; read so far:\n${text}`));
      }, 10_000);
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (until(text)) {
          clearTimeout(timer);
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.write(bytes);
    });

  it('answers pipelined requests on one connection in order, each with its own body and ETag', async () => {
    t = await startTestApp();
    const ids: number[] = [];
    for (const name of ['Ada', 'Grace', 'Edsger']) {
      const created = await t.app.inject({ method: 'POST', url: '/users', payload: { name } });
      ids.push(created.json<{ id: number }>().id);
    }
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const paths = [`/users/${ids[2]}`, `/users/${ids[0]}`, '/users/999999', `/users/${ids[1]}`, `/users/${ids[0]}`];
    const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\n\r\n`;
    const text = await exchange(port, paths.map(request).join(''), (s) => (s.match(/HTTP\/1\.1 /g) ?? []).length === paths.length && s.endsWith('}'));
    const responses = text.split(/(?=HTTP\/1\.1 )/);
    expect(responses.map((r) => r.slice(9, 12))).toEqual(['200', '200', '404', '200', '200']);
    const names = responses.map((r) => /"name":"(\w+)"/.exec(r)?.[1]);
    expect(names).toEqual(['Edsger', 'Ada', undefined, 'Grace', 'Ada']);
    const tags = responses.map((r) => /\r\netag: ("[^"]+")/i.exec(r)?.[1]);
    expect(tags[1]).toBeDefined();
    expect(tags[1]).toBe(tags[4]);
    expect(new Set(tags.filter(Boolean)).size).toBe(3);
  });

  it('answers more simultaneous requests than it holds (on many connections), each correctly', async () => {
    t = await startTestApp();
    const created = await t.app.inject({ method: 'POST', url: '/users', payload: { name: 'Barbara' } });
    const id = created.json<{ id: number }>().id;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const response = await fetch(i % 5 === 4 ? `${base}/users/0` : `${base}/users/${id}`, { headers });
        return { status: response.status, body: (await response.json()) as Record<string, unknown>, requestId: response.headers.get('x-request-id') };
      }),
    );
    for (const [i, result] of results.entries()) {
      if (i % 5 === 4) {
        expect(result.status).toBe(404);
        expect(result.body.requestId).toBe(result.requestId);
      } else {
        expect(result.status).toBe(200);
        expect(result.body.name).toBe('Barbara');
      }
    }
    expect(new Set(results.map((r) => r.requestId)).size).toBe(100);
  });

  it('an async handler that sends and returns nothing (Fastify then sends again, empty) answers once, and its connection goes on', async () => {
    t = await startTestApp();
    t.app.get('/test/send-and-return', async (_request, reply) => {
      await Promise.resolve();
      void reply.type('text/plain').send('once');
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const request = 'GET /test/send-and-return HTTP/1.1\r\nHost: x\r\n\r\n';
    const text = await exchange(port, request + request + request, (s) => (s.match(/\r\n\r\nonce/g) ?? []).length === 3);
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    expect(t.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it('a response Node refuses to write (a header it will not take) is a logged 500 problem, and the server goes on', async () => {
    t = await startTestApp();
    t.app.get('/test/bad-header', (_request, reply) => reply.header('x-bad', 'line\nbreak').send('never'));
    const refused = await t.app.inject({ method: 'GET', url: '/test/bad-header' });
    expect(refused.statusCode).toBe(500);
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const problem = refused.json<Record<string, unknown>>();
    expect(problem.code).toBe('internal');
    expect(problem.requestId).toBe(refused.headers['x-request-id']);
    expect(JSON.stringify(problem)).not.toContain('x-bad');
    const logged = t.logs.find((line) => line.msg === 'response could not be written');
    expect(logged?.requestId).toBe(refused.headers['x-request-id']);
    expect(JSON.stringify(logged?.err)).toContain('x-bad');
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('an error after the response was made does not replace it (as when Fastify has sent it already)', async () => {
    t = await startTestApp();
    t.app.get('/test/late-error', async (_request, reply) => {
      reply.code(202).type('text/plain').send('made');
      await Promise.resolve();
      throw new Error('late failure');
    });
    const response = await t.app.inject({ method: 'GET', url: '/test/late-error' });
    expect(response.statusCode).toBe(202);
    expect(response.body).toBe('made');
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
