import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/test-app.js';

/**
 * /favicon.ico: every browser asks for it on every page it shows (GraphiQL, the API reference, a
 * JSON answer opened in a tab), so it is served (no 404 in the browser's console), to anyone, from
 * the icon made in src/http/favicon.ts; the HTML pages link it.
 */

const ANONYMOUS = { authorization: '' };

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('/favicon.ico', () => {
  it('is a 16×16, 32-bit ICO, served without a token, cacheable with a strong ETag', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/favicon.ico', headers: ANONYMOUS });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('image/x-icon');
    expect(response.headers['cache-control']).toBe('public, max-age=86400');
    const icon = response.rawPayload;
    // ICONDIR: reserved 0, type 1 (icon), one image; its entry: 16×16, 32 bits, right after the directory.
    expect([icon.readUInt16LE(0), icon.readUInt16LE(2), icon.readUInt16LE(4)]).toEqual([0, 1, 1]);
    expect([icon[6], icon[7], icon.readUInt16LE(12), icon.readUInt32LE(18)]).toEqual([16, 16, 32, 22]);
    expect(icon.readUInt32LE(14)).toBe(icon.length - 22);
    // The image: a BITMAPINFOHEADER (height doubled for the mask), 16×16 BGRA pixels, a 1-bit mask.
    expect([icon.readUInt32LE(22), icon.readInt32LE(26), icon.readInt32LE(30), icon.readUInt16LE(36)]).toEqual([40, 16, 32, 32]);
    expect(icon.length).toBe(22 + 40 + 16 * 16 * 4 + 16 * 4);
    const etag = response.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await t.app.inject({ method: 'GET', url: '/favicon.ico', headers: { ...ANONYMOUS, 'if-none-match': String(etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('answers whatever Accept says (browsers ask for images), and HEAD', async () => {
    const accept = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';
    expect((await t.app.inject({ method: 'GET', url: '/favicon.ico', headers: { ...ANONYMOUS, accept } })).statusCode).toBe(200);
    const head = await t.app.inject({ method: 'HEAD', url: '/favicon.ico', headers: ANONYMOUS });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('image/x-icon');
  });

  it('is linked from every HTML page the server serves', async () => {
    const html = { ...ANONYMOUS, accept: 'text/html' };
    for (const url of ['/docs', '/graphql', '/admin']) {
      const page = await t.app.inject({ method: 'GET', url, headers: html });
      expect(page.statusCode, url).toBe(200);
      expect(page.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(page.body, url).toContain('<link rel="icon" href="/favicon.ico">');
    }
  });
});
