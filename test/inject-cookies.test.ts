import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

/**
 * app.inject() (light-my-request) encodes its `cookies` option with the `cookie` package. Version 2
 * of it wants Node.js 22 (npm install warned EBADENGINE on Node.js 20), so package.json's
 * `overrides` gives light-my-request cookie 1.1, which has the one function it calls
 * (stringifySetCookie). This checks both: the pinned version fits the running Node.js, and
 * cookies still reach a route through inject.
 */

const require = createRequire(import.meta.url);
const lightMyRequest = dirname(require.resolve('light-my-request/package.json', { paths: [dirname(require.resolve('fastify/package.json'))] }));

describe('the cookie package under light-my-request', () => {
  it('allows the running Node.js in its engines', () => {
    const cookieManifest = join(dirname(require.resolve('cookie', { paths: [lightMyRequest] })), '..', 'package.json');
    const { engines } = JSON.parse(readFileSync(cookieManifest, 'utf8')) as { engines?: { node?: string } };
    const floor = /^>=\s*(\d+)/.exec(engines?.node ?? '>=0')?.[1];
    expect(Number(floor), `cookie's engines: ${String(engines?.node)}`).toBeLessThanOrEqual(Number(process.versions.node.split('.')[0]));
  });

  it('app.inject({ cookies }) sends them in the Cookie header, encoded', async () => {
    const app = Fastify();
    app.get('/echo', (request, reply) => reply.send({ cookie: request.headers.cookie ?? null }));
    const response = await app.inject({ method: 'GET', url: '/echo', cookies: { session: 'a b;c', plain: 'x1' } });
    expect(response.json()).toEqual({ cookie: 'session=a%20b%3Bc; plain=x1' });
    await app.close();
  });
});
