import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { TargetGuard, TargetRefusedError } from '../src/webhooks/target-guard.js';
import { actAsAdmin, captureLogs, json, startTestApp, tempDir, TEST_ADMIN_TOKEN, type TestApp } from './helpers/test-app.js';
import { createTestDatabase } from './helpers/test-database.js';
import { getWebhook, waitUntil, WebhookReceiver, type WebhookBody } from './helpers/webhook-receiver.js';

/**
 * Where webhooks may go: every IPv6 form of an address (literal in the URL, or a DNS answer for its
 * host) is judged, IPv4-carrying forms by the IPv4 address they carry, transition forms refused
 * whole; the allow list is honoured for all of them. And URLs never carry credentials.
 */

interface Problem {
  code: string;
  errors?: { pointer: string; detail: string }[];
}

/** An IPv6 address, what it is, and whether a webhook may target it with no allow list. */
const ADDRESSES: readonly (readonly [address: string, what: string, allowed: boolean])[] = [
  ['::127.0.0.1', 'IPv4-compatible loopback', false],
  ['::10.0.0.1', 'IPv4-compatible private', false],
  ['::8.8.8.8', 'IPv4-compatible public (deprecated form, refused whole)', false],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback', false],
  ['::ffff:10.0.0.1', 'IPv4-mapped private', false],
  ['::ffff:169.254.169.254', 'IPv4-mapped cloud metadata', false],
  ['::ffff:8.8.8.8', 'IPv4-mapped public', true],
  ['::ffff:0:10.0.0.1', 'IPv4-translated private', false],
  ['::ffff:0:127.0.0.1', 'IPv4-translated loopback', false],
  ['::ffff:0:8.8.8.8', 'IPv4-translated public', true],
  ['64:ff9b::10.0.0.1', 'NAT64 of a private address', false],
  ['64:ff9b::127.0.0.1', 'NAT64 of loopback', false],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of cloud metadata, in hex', false],
  ['64:ff9b::8.8.8.8', 'NAT64 of a public address (IPv6-only hosts behind DNS64)', true],
  ['64:ff9b:1::a00:1', 'local-use NAT64 (refused whole)', false],
  ['2002:a00:1::1', '6to4 of 10.0.0.1', false],
  ['2002:7f00:1::1', '6to4 of 127.0.0.1', false],
  ['2002:808:808::1', '6to4 of a public address (refused whole)', false],
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'Teredo', false],
  ['2001:0:a00:1::1', 'Teredo with a private server address', false],
  ['fec0::1', 'site-local', false],
  ['fec0:0:0:ffff::1', 'site-local (another)', false],
  ['::', 'unspecified', false],
  ['::1', 'loopback', false],
  ['fe80::1', 'link-local', false],
  ['fd12:3456::1', 'unique local', false],
  ['ff02::1', 'multicast', false],
  ['100::1', 'discard', false],
  ['2001:db8::1', 'documentation', false],
  ['3fff::1', 'documentation (RFC 9637)', false],
  ['2001:2::1', 'benchmarking', false],
  ['2606:4700:4700::1111', 'global unicast', true],
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

async function register(app: FastifyInstance, url: string): Promise<{ status: number; problem?: Problem; created?: WebhookBody }> {
  const response = await app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url, events: ['user.created'] } });
  if (response.statusCode === 201) {
    const created = json<WebhookBody>(response);
    // Nothing is ever delivered there: the endpoint goes at once.
    expect((await app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}` })).statusCode).toBe(204);
    return { status: 201, created };
  }
  return { status: response.statusCode, problem: json<Problem>(response) };
}

describe('IPv6 forms as literal URLs, with no allow list', () => {
  for (const [address, what, allowed] of ADDRESSES) {
    it(`http://[${address}]/ (${what}) → ${allowed ? '201' : '422 /url'}`, async () => {
      const result = await register(t.app, `http://[${address}]/hook`);
      if (allowed) expect(result.status, JSON.stringify(result.problem)).toBe(201);
      else {
        expect(result.status).toBe(422);
        expect(result.problem?.errors).toEqual([{ pointer: '/url', detail: expect.stringMatching(/is refused: .* resolves to/) as string }]);
      }
    });
  }

  it('a refusal of a form carrying an IPv4 address names that address', async () => {
    for (const [url, named] of [
      ['http://[64:ff9b::a9fe:a9fe]/', '169.254.169.254'],
      ['http://[2002:a00:1::1]/', '10.0.0.1'],
      ['http://[::ffff:0:7f00:1]/', '127.0.0.1'],
    ] as const) {
      expect((await register(t.app, url)).problem?.errors?.[0]?.detail).toContain(named);
    }
  });
});

describe('the same forms as DNS answers for a host name', () => {
  /** A guard whose resolver answers `addresses` for every name. */
  const guardAnswering = (addresses: string[], allow: string[] = []): TargetGuard =>
    new TargetGuard({ allow, lookup: () => Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))) });
  const outcome = async (guard: TargetGuard, url = 'https://hooks.example.test/hook'): Promise<string> => {
    try {
      return `allowed ${(await guard.resolve(new URL(url))).address}`;
    } catch (error) {
      if (error instanceof TargetRefusedError) return 'refused';
      throw error;
    }
  };

  for (const [address, what, allowed] of ADDRESSES) {
    it(`a name resolving to ${address} (${what}) is ${allowed ? 'allowed' : 'refused'}`, async () => {
      expect(await outcome(guardAnswering([address]))).toBe(allowed ? `allowed ${address}` : 'refused');
      // Written out in full, as some resolvers answer.
      const full = new URL(`http://[${address}]/`).hostname.replace(/^\[|\]$/g, '');
      expect(await outcome(guardAnswering([full]))).toBe(allowed ? `allowed ${full}` : 'refused');
    });
  }

  it('one refused answer among public ones refuses the name', async () => {
    expect(await outcome(guardAnswering(['2606:4700:4700::1111', '93.184.215.14', '64:ff9b::a00:1']))).toBe('refused');
  });

  it('the allow list is honoured: an allowed IPv4 range allows the forms carrying its addresses, and only those', async () => {
    const guard = guardAnswering([], ['10.0.0.0/8', '2002::/16', '127.0.0.1', 'fec0::1']);
    const answering = (address: string): TargetGuard => guardAnswering([address], ['10.0.0.0/8', '2002::/16', '127.0.0.1', 'fec0::1']);
    expect(await outcome(guard)).toBe('refused'); // no answer at all
    for (const address of ['::ffff:10.0.0.1', '::ffff:0:10.1.2.3', '64:ff9b::10.0.0.1', '::ffff:127.0.0.1', '64:ff9b::7f00:1', '2002:a00:1::1', '2002:808:808::1', 'fec0::1', '10.9.9.9', '127.0.0.1']) {
      expect(await outcome(answering(address)), address).toBe(`allowed ${address}`);
    }
    for (const address of ['::ffff:192.168.0.1', '64:ff9b::192.168.0.1', '::ffff:127.0.0.2', '2001:0:a00:1::1', 'fec0::2', '::10.0.0.1', '127.0.0.2']) {
      expect(await outcome(answering(address)), address).toBe('refused');
    }
  });

  it('an allowed host name is allowed whatever it resolves to', async () => {
    expect(await outcome(guardAnswering(['::ffff:10.0.0.1', '2002:a00:1::1'], ['hooks.example.test']))).toBe('allowed ::ffff:10.0.0.1');
  });
});

describe('webhook URLs with credentials', () => {
  it('are refused with 422 on create and on update (user and password, or user alone)', async () => {
    for (const url of ['http://user:pw@93.184.215.14/hook', 'https://user@93.184.215.14/hook', 'https://:secret@93.184.215.14/']) {
      const result = await register(t.app, url);
      expect(result.status).toBe(422);
      expect(result.problem?.errors).toEqual([{ pointer: '/url', detail: expect.stringContaining('user name or password') as string }]);
    }
    const created = json<WebhookBody>(await t.app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url: 'https://93.184.215.14/hook', events: ['user.created'] } }));
    const patched = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, payload: { url: 'https://admin:hunter2@93.184.215.14/hook' } });
    expect(patched.statusCode).toBe(422);
    expect((await getWebhook(t.app, created.id)).url).toBe('https://93.184.215.14/hook');
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${created.id}` })).statusCode).toBe(204);
  });

  it('one stored by an earlier version is never shown nor sent: the server pauses it, erases the credentials and says why', async () => {
    const receiver = await WebhookReceiver.start();
    const dir = tempDir();
    const db = await createTestDatabase(dir.path);
    const start = async (): Promise<FastifyInstance> =>
      actAsAdmin(
        await buildApp({
          databaseUrl: db.url,
          adminToken: TEST_ADMIN_TOKEN,
          logDestination: captureLogs().logDestination,
          webhooks: { allowHosts: ['127.0.0.1'], pollIntervalMs: 50, retryScheduleSeconds: [0.1] },
        }),
      );
    let app = await start();
    try {
      const created = json<WebhookBody>(await app.inject({ method: 'POST', url: '/v1/webhooks', payload: { url: receiver.url('/hook'), events: ['user.created'] } }));
      await app.close();
      // As an earlier version accepted it.
      const credentialed = receiver.url('/hook').replace('http://', 'http://admin:hunter2@');
      await db.run('update "_restgraph_webhooks" set "url" = ? where "id" = ?', [credentialed, created.id]);

      app = await start();
      const shown = await app.inject({ method: 'GET', url: '/v1/webhooks' });
      expect(shown.body).not.toContain('hunter2');
      expect(shown.body).not.toContain('admin:');
      const webhook = await getWebhook(app, created.id);
      expect(webhook).toMatchObject({ url: receiver.url('/hook'), status: 'paused', disabledReason: expect.stringContaining('user name and password') as string });
      const stored = await db.query<{ url: string }>('select "url" from "_restgraph_webhooks" where "id" = ?', [created.id]);
      expect(stored).toEqual([{ url: receiver.url('/hook') }]);

      // Events queue up while it is paused, and go out on resume, without any credential.
      expect((await app.inject({ method: 'POST', url: '/users', payload: { name: 'Queued' } })).statusCode).toBe(201);
      expect((await app.inject({ method: 'POST', url: `/v1/webhooks/${created.id}/resume` })).statusCode).toBe(200);
      await waitUntil(() => receiver.to('/hook').length >= 1, 'the queued delivery');
      expect(receiver.to('/hook')[0]?.headers.authorization).toBeUndefined();
      expect((await getWebhook(app, created.id)).disabledReason).toBeNull();
    } finally {
      await app.close();
      await receiver.close();
      await db.drop();
      dir.cleanup();
    }
  });
});
