import { createHmac, createPublicKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import type { JwtOptions } from '../src/auth/authenticator.js';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { ConfigError } from '../src/errors.js';
import { checkResponsesAgainstOpenApi, json, startTestApp, type TestApp } from './helpers/test-app.js';

// Every response these tests get must conform to the OpenAPI documents the app serves.
checkResponsesAgainstOpenApi();

/**
 * JWT verification (issue 3): tokens signed with jose by test keys, verified against a JWKS served
 * by a local HTTP server on 127.0.0.1, an HS256 secret, or static PEM public keys.
 */

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'restgraph-api';
const SECRET = 'an-hs256-secret-of-at-least-32-characters!';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const INVALID_TOKEN = /^Bearer realm="restgraph", error="invalid_token", error_description="[^"]*"$/;

interface Reply {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}
interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
}
type Row = Record<string, unknown> & { id: number };

interface TestKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
  pem: string;
}

async function makeKey(kid: string, alg = 'RS256'): Promise<TestKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, pem: await exportSPKI(publicKey) };
}

interface SignOptions {
  key?: TestKey;
  claims?: JWTPayload;
  issuer?: string | null;
  audience?: string | string[] | null;
  /** Seconds from now; null leaves exp out. */
  expiresIn?: number | null;
  notBefore?: number;
  subject?: string;
  kid?: string | null;
}

const now = (): number => Math.floor(Date.now() / 1000);

/** A JWT signed with a test key (RS256 and friends), valid for ISSUER/AUDIENCE unless told otherwise. */
async function sign(key: TestKey, options: Omit<SignOptions, 'key'> = {}): Promise<string> {
  const kid = options.kid === undefined ? key.kid : options.kid;
  const jwt = new SignJWT({ scope: 'users:read', ...options.claims }).setProtectedHeader({ alg: key.alg, typ: 'JWT', ...(kid === null ? {} : { kid }) }).setIssuedAt();
  return finish(jwt, options).sign(key.privateKey);
}

async function signHs(secret: Uint8Array, options: Omit<SignOptions, 'key'> = {}): Promise<string> {
  const jwt = new SignJWT({ scope: 'users:read', ...options.claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...(options.kid ? { kid: options.kid } : {}) }).setIssuedAt();
  return finish(jwt, options).sign(secret);
}

function finish(jwt: SignJWT, options: Omit<SignOptions, 'key'>): SignJWT {
  const issuer = options.issuer === undefined ? ISSUER : options.issuer;
  const audience = options.audience === undefined ? AUDIENCE : options.audience;
  const expiresIn = options.expiresIn === undefined ? 300 : options.expiresIn;
  if (issuer !== null) jwt.setIssuer(issuer);
  if (audience !== null) jwt.setAudience(audience);
  if (expiresIn !== null) jwt.setExpirationTime(now() + expiresIn);
  if (options.notBefore !== undefined) jwt.setNotBefore(now() + options.notBefore);
  if (options.subject !== undefined) jwt.setSubject(options.subject);
  return jwt;
}

const b64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** A JWT with any header, HMAC-SHA256-signed with any bytes (for algorithm-confusion attacks), or unsigned. */
function handMade(header: Record<string, unknown>, payload: Record<string, unknown>, hmacKey?: string | Buffer): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const signature = hmacKey === undefined ? '' : createHmac('sha256', hmacKey).update(input).digest('base64url');
  return `${input}.${signature}`;
}

const validClaims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 300, scope: 'users:read', ...extra });

function expectInvalidToken(response: Reply, detail?: RegExp): void {
  expect({ status: response.statusCode, body: response.body }).toMatchObject({ status: 401 });
  expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
  const problem = json<Problem>(response);
  expect(problem).toMatchObject({ type: 'urn:restgraph:problem:invalid-token', status: 401, code: 'invalid-token' });
  expect(response.headers['www-authenticate']).toMatch(INVALID_TOKEN);
  if (detail !== undefined) expect(problem.detail).toMatch(detail);
}

function expectOk(response: Reply): void {
  expect({ status: response.statusCode, body: response.body }).toMatchObject({ status: 200 });
  expect(response.headers['www-authenticate']).toBeUndefined();
}

/** The JWKS documents the local issuer serves, by path; change them to rotate keys. */
const jwksByPath = new Map<string, JWK[]>();
const fetchesByPath = new Map<string, number>();
let jwksServer: Server;
let jwksBase: string;
let keyA: TestKey;
let keyB: TestKey;
let keyC: TestKey;
let keyEc: TestKey;

beforeAll(async () => {
  [keyA, keyB, keyC, keyEc] = await Promise.all([makeKey('key-a'), makeKey('key-b'), makeKey('key-c'), makeKey('key-ec', 'ES256')]);
  jwksServer = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const keys = jwksByPath.get(path);
    fetchesByPath.set(path, (fetchesByPath.get(path) ?? 0) + 1);
    if (keys === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksBase = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  jwksByPath.set('/jwks.json', [keyA.jwk, keyEc.jwk]);
});

afterAll(async () => {
  jwksServer.closeAllConnections();
  await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
});

async function appWith(jwt: JwtOptions): Promise<TestApp> {
  return startTestApp({ jwt, apiKeyCacheMs: 0 });
}

const get = (t: TestApp, token: string, url = '/users'): Promise<Reply> => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

describe('JWKS URL (issuer and audience required)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ jwksUrl: `${jwksBase}/jwks.json`, issuer: ISSUER, audience: AUDIENCE, jwksCooldownMs: 0 });
  });
  afterAll(async () => t.close());

  it('a valid RS256 token with scope "users:read" reads users', async () => {
    expectOk(await get(t, await sign(keyA)));
  });

  it('a valid ES256 token from the same JWKS works', async () => {
    expectOk(await get(t, await sign(keyEc)));
  });

  it('scopes come from the space-separated scope claim: any one of several suffices; none → 403 insufficient_scope', async () => {
    expectOk(await get(t, await sign(keyA, { claims: { scope: 'posts:write users:write' } })));
    const response = await get(t, await sign(keyA, { claims: { scope: 'posts:write orders:read' } }));
    expect(response.statusCode).toBe(403);
    expect(json<Problem>(response).code).toBe('forbidden');
    expect(response.headers['www-authenticate']).toBe('Bearer realm="restgraph", error="insufficient_scope", scope="users:read users:write"');
    const noScope = await get(t, await sign(keyA, { claims: { scope: undefined } }));
    expect(noScope.statusCode).toBe(403);
  });

  it('a scope array under "scp" is ignored when the scopes claim is "scope"', async () => {
    const response = await get(t, await sign(keyA, { claims: { scope: undefined, scp: ['users:read'] } }));
    expect(response.statusCode).toBe(403);
  });

  it('an admin scope passes everything, token management included', async () => {
    const token = await sign(keyA, { claims: { scope: 'admin' } });
    expectOk(await get(t, token, '/orders'));
    expectOk(await get(t, token, '/v1/tokens'));
  });

  it('expired (exp 60 s ago) → 401 invalid_token', async () => {
    expectInvalidToken(await get(t, await sign(keyA, { expiresIn: -60 })), /expired/i);
  });

  it('exp within the 5 s clock tolerance is still accepted', async () => {
    expectOk(await get(t, await sign(keyA, { expiresIn: -2 })));
  });

  it('nbf in the future (2 min) → 401', async () => {
    expectInvalidToken(await get(t, await sign(keyA, { notBefore: 120 })), /nbf/);
  });

  it('wrong aud → 401; missing aud → 401', async () => {
    expectInvalidToken(await get(t, await sign(keyA, { audience: 'another-api' })), /aud/);
    expectInvalidToken(await get(t, await sign(keyA, { audience: null })), /aud/);
  });

  it('wrong iss → 401; missing iss → 401', async () => {
    expectInvalidToken(await get(t, await sign(keyA, { issuer: 'https://evil.test/' })), /iss/);
    expectInvalidToken(await get(t, await sign(keyA, { issuer: null })), /iss/);
  });

  it('alg "none" (unsecured JWT, empty signature) → 401', async () => {
    expectInvalidToken(await get(t, handMade({ alg: 'none', typ: 'JWT' }, validClaims({ scope: 'admin' }))));
    expectInvalidToken(await get(t, handMade({ alg: 'none', typ: 'JWT', kid: keyA.kid }, validClaims({ scope: 'admin' }))));
    expectInvalidToken(await get(t, handMade({ alg: 'NONE' }, validClaims({ scope: 'admin' }))));
  });

  it('HS/RS confusion: HS256 signed with the RSA public key (PEM text, DER bytes, JWK JSON) as the HMAC secret → 401', async () => {
    const der = createPublicKey(keyA.pem).export({ type: 'spki', format: 'der' });
    for (const secret of [keyA.pem, keyA.pem.trim(), der, JSON.stringify(keyA.jwk)]) {
      expectInvalidToken(await get(t, handMade({ alg: 'HS256', typ: 'JWT', kid: keyA.kid }, validClaims({ scope: 'admin' }), secret)));
      expectInvalidToken(await get(t, handMade({ alg: 'HS256', typ: 'JWT' }, validClaims({ scope: 'admin' }), secret)));
    }
  });

  it('a token signed by a key the JWKS does not hold → 401 (kid unknown, or a known kid with another key’s signature)', async () => {
    expectInvalidToken(await get(t, await sign(keyC)));
    expectInvalidToken(await get(t, await sign(keyC, { kid: keyA.kid })));
    expectInvalidToken(await get(t, await sign(keyC, { kid: null })));
  });

  it('a tampered payload → 401', async () => {
    const [header, , signature] = (await sign(keyA)).split('.');
    const forged = `${header ?? ''}.${b64url(JSON.stringify(validClaims({ scope: 'admin' })))}.${signature ?? ''}`;
    expectInvalidToken(await get(t, forged));
  });

  it('garbage in JWT shape → 401', async () => {
    expectInvalidToken(await get(t, 'aaa.bbb.ccc'));
    expectInvalidToken(await get(t, `${b64url('{"alg":"RS256"}')}.not-json.sig`));
  });

  it('the subject (sub) drives the owner rule', async () => {
    const admin = { method: 'POST' as const, headers: {} };
    await t.app.inject({ ...admin, url: '/users', payload: { name: 'Alice' } });
    await t.app.inject({ ...admin, url: '/users', payload: { name: 'Bob' } });
    const product = json<Row>(await t.app.inject({ ...admin, url: '/products', payload: { name: 'W', sku: 'JWT-1', price: 1 } })).id;
    const aliceOrder = json<Row>(await t.app.inject({ ...admin, url: '/orders', payload: { userId: 1, productId: product, quantity: 1 } })).id;
    const bobOrder = json<Row>(await t.app.inject({ ...admin, url: '/orders', payload: { userId: 2, productId: product, quantity: 1 } })).id;
    const bob = await sign(keyA, { subject: '2', claims: { scope: 'orders:read orders:write' } });
    const list = await get(t, bob, '/orders');
    expectOk(list);
    expect(json<Row[]>(list).map((o) => o.id)).toEqual([bobOrder]);
    expect((await get(t, bob, `/orders/${aliceOrder}`)).statusCode).toBe(404);
    const created = await t.app.inject({ method: 'POST', url: '/orders', headers: { authorization: `Bearer ${bob}` }, payload: { productId: product, quantity: 2 } });
    expect(created.statusCode, created.body).toBe(201);
    expect(json(created)).toMatchObject({ userId: 2, quantity: 2 });
    const forged = await t.app.inject({ method: 'POST', url: '/orders', headers: { authorization: `Bearer ${bob}` }, payload: { userId: 1, productId: product, quantity: 2 } });
    expect(forged.statusCode).toBe(403);
    const noSubject = await sign(keyA, { claims: { scope: 'orders:read' } });
    expect(json(await get(t, noSubject, '/orders'))).toEqual([]);
  });
});

describe('JWKS rotation', () => {
  let t: TestApp;
  beforeAll(async () => {
    jwksByPath.set('/rotating.json', [keyA.jwk]);
    t = await appWith({ jwksUrl: `${jwksBase}/rotating.json`, issuer: ISSUER, audience: AUDIENCE, jwksCooldownMs: 0 });
  });
  afterAll(async () => t.close());

  it('key A works; after the JWKS switches to key B, B works (refetched) and A fails', async () => {
    const tokenA = await sign(keyA);
    expectOk(await get(t, tokenA));
    const fetchesBefore = fetchesByPath.get('/rotating.json') ?? 0;
    jwksByPath.set('/rotating.json', [keyB.jwk]);
    await new Promise((r) => setTimeout(r, 10));
    expectOk(await get(t, await sign(keyB)));
    expect(fetchesByPath.get('/rotating.json')).toBeGreaterThan(fetchesBefore);
    await new Promise((r) => setTimeout(r, 10));
    expectInvalidToken(await get(t, tokenA));
  });
});

describe('JWKS endpoint unreachable', () => {
  it('a JWT is refused with 401 invalid_token (not a 500), and API keys and the admin token still work', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    const t = await appWith({ jwksUrl: `http://127.0.0.1:${port}/jwks.json`, issuer: ISSUER, audience: AUDIENCE });
    try {
      expectInvalidToken(await get(t, await sign(keyA)));
      expectOk(await t.app.inject({ method: 'GET', url: '/users' }));
    } finally {
      await t.close();
    }
  });
});

describe('scopes claim', () => {
  for (const claim of ['scp', 'permissions']) {
    describe(`scopesClaim "${claim}" (an array)`, () => {
      let t: TestApp;
      beforeAll(async () => {
        t = await appWith({ jwksUrl: `${jwksBase}/jwks.json`, issuer: ISSUER, audience: AUDIENCE, scopesClaim: claim });
      });
      afterAll(async () => t.close());

      it('reads scopes from the array', async () => {
        expectOk(await get(t, await sign(keyA, { claims: { scope: undefined, [claim]: ['orders:read', 'users:read'] } })));
      });

      it('an array without the scope → 403; the "scope" string claim is not consulted', async () => {
        expect((await get(t, await sign(keyA, { claims: { scope: 'users:read', [claim]: ['orders:read'] } }))).statusCode).toBe(403);
        expect((await get(t, await sign(keyA, { claims: { scope: 'users:read' } }))).statusCode).toBe(403);
      });

      it('a space-separated string in the claim works too', async () => {
        expectOk(await get(t, await sign(keyA, { claims: { scope: undefined, [claim]: 'orders:read users:read' } })));
      });
    });
  }
});

describe('HS256 secret only', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ secret: SECRET, issuer: ISSUER, audience: AUDIENCE });
  });
  afterAll(async () => t.close());

  it('a token signed with the secret works', async () => {
    expectOk(await get(t, await signHs(new TextEncoder().encode(SECRET))));
  });

  it('a token signed with another secret → 401', async () => {
    expectInvalidToken(await get(t, await signHs(new TextEncoder().encode(`${SECRET}-other`))), /signature/i);
  });

  it('expired and wrong-audience HS256 tokens → 401', async () => {
    expectInvalidToken(await get(t, await signHs(new TextEncoder().encode(SECRET), { expiresIn: -60 })));
    expectInvalidToken(await get(t, await signHs(new TextEncoder().encode(SECRET), { audience: 'other' })));
  });

  it('an RS256 token is refused: no public key is configured', async () => {
    expectInvalidToken(await get(t, await sign(keyA)));
  });

  it('alg none → 401', async () => {
    expectInvalidToken(await get(t, handMade({ alg: 'none' }, validClaims({ scope: 'admin' }))));
  });
});

describe('secret and JWKS both configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ secret: SECRET, jwksUrl: `${jwksBase}/jwks.json`, issuer: ISSUER, audience: AUDIENCE });
  });
  afterAll(async () => t.close());

  it('HS256 with the secret and RS256 from the JWKS both work', async () => {
    expectOk(await get(t, await signHs(new TextEncoder().encode(SECRET))));
    expectOk(await get(t, await sign(keyA)));
  });

  it('an HS256 token signed with the public key’s bytes fails', async () => {
    const der = createPublicKey(keyA.pem).export({ type: 'spki', format: 'der' });
    for (const secret of [keyA.pem, der]) {
      expectInvalidToken(await get(t, handMade({ alg: 'HS256', kid: keyA.kid }, validClaims({ scope: 'admin' }), secret)));
    }
  });
});

describe('static PEM public keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ publicKeys: [keyA.pem, keyEc.pem], issuer: ISSUER, audience: AUDIENCE });
  });
  afterAll(async () => t.close());

  it('RS256 signed by the first key works (with or without kid)', async () => {
    expectOk(await get(t, await sign(keyA)));
    expectOk(await get(t, await sign(keyA, { kid: null })));
  });

  it('ES256 signed by the second key works (the first, an RSA key, is skipped)', async () => {
    expectOk(await get(t, await sign(keyEc)));
  });

  it('a token signed by a key not configured → 401', async () => {
    expectInvalidToken(await get(t, await sign(keyB)));
  });

  it('HS256 signed with the PEM text → 401', async () => {
    expectInvalidToken(await get(t, handMade({ alg: 'HS256' }, validClaims({ scope: 'admin' }), keyA.pem)));
  });

  it('wrong iss and expired → 401', async () => {
    expectInvalidToken(await get(t, await sign(keyA, { issuer: 'https://evil.test/' })));
    expectInvalidToken(await get(t, await sign(keyA, { expiresIn: -60 })));
  });
});

describe('audience list', () => {
  it('a token for any one of several configured audiences works; others fail', async () => {
    const t = await appWith({ publicKeys: [keyA.pem], issuer: ISSUER, audience: ['api-1', 'api-2'] });
    try {
      expectOk(await get(t, await sign(keyA, { audience: 'api-2' })));
      expectOk(await get(t, await sign(keyA, { audience: ['x', 'api-1'] })));
      expectInvalidToken(await get(t, await sign(keyA, { audience: 'api-3' })));
    } finally {
      await t.close();
    }
  });
});

describe('tokens without sub and jti: each is an identity of its own', () => {
  let t: TestApp;
  const secret = new TextEncoder().encode(SECRET);
  /** A token without sub and jti; `n` only makes the tokens differ. */
  const anonymousToken = (n: number): Promise<string> => signHs(secret, { claims: { scope: 'users:read users:write', n } });
  beforeAll(async () => {
    t = await startTestApp({ jwt: { secret: SECRET, issuer: ISSUER, audience: AUDIENCE }, rateLimits: { default: '2/1m', anonymous: '100/1m' } });
  });
  afterAll(async () => t.close());

  it('two such tokens do not share a rate-limit counter (they shared "jwt:unknown")', async () => {
    const [first, second] = [await anonymousToken(1), await anonymousToken(2)];
    expect(first).not.toBe(second);
    expectOk(await get(t, first));
    expectOk(await get(t, first));
    expect((await get(t, first)).statusCode).toBe(429);
    const other = await get(t, second);
    expectOk(other);
    expect(other.headers.ratelimit).toMatch(/^"default";r=1;/);
  });

  it('two such tokens do not share an Idempotency-Key: the second one\'s request runs, it is not replayed', async () => {
    const payload = { name: 'Same body' };
    const unlimited = await startTestApp({ jwt: { secret: SECRET, issuer: ISSUER, audience: AUDIENCE } });
    try {
      const post = async (token: string): Promise<Reply> =>
        unlimited.app.inject({ method: 'POST', url: '/users', headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'jwt-without-sub-1' }, payload });
      const first = await post(await anonymousToken(3));
      const second = await post(await anonymousToken(4));
      expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(json<Row>(second).id).not.toBe(json<Row>(first).id);
    } finally {
      await unlimited.close();
    }
  });

  it('tokens of one subject share their identity; a jti that equals a subject is another identity', async () => {
    const quota = async (token: string): Promise<string> => String((await get(t, token)).headers.ratelimit);
    const subject = await signHs(secret, { subject: 'same-id', claims: { n: 5 } });
    const sameSubject = await signHs(secret, { subject: 'same-id', claims: { n: 6 } });
    const jti = await signHs(secret, { claims: { jti: 'same-id', n: 7 } });
    expect(await quota(subject)).toMatch(/^"default";r=1;/);
    expect(await quota(sameSubject)).toMatch(/^"default";r=0;/);
    expect(await quota(jti)).toMatch(/^"default";r=1;/);
  });
});

describe('no JWT configuration', () => {
  it('any JWT → 401 invalid_token', async () => {
    const t = await startTestApp();
    try {
      expectInvalidToken(await get(t, await sign(keyA)));
      expectInvalidToken(await get(t, await signHs(new TextEncoder().encode(SECRET))));
    } finally {
      await t.close();
    }
  });
});

describe('JWT configuration errors', () => {
  const cases: { name: string; jwt: JwtOptions; option: string }[] = [
    { name: 'a secret shorter than 32 characters', jwt: { secret: 'short-secret' }, option: 'RESTGRAPH_JWT_SECRET' },
    { name: 'a public key that is not PEM', jwt: { publicKeys: ['not a key'] }, option: 'RESTGRAPH_JWT_PUBLIC_KEY' },
    { name: 'a JWKS URL that is not a URL', jwt: { jwksUrl: 'not a url' }, option: 'RESTGRAPH_JWKS_URL' },
  ];
  for (const c of cases) {
    it(`${c.name} stops start-up with a ConfigError naming ${c.option}`, async () => {
      const error: unknown = await buildApp({ databaseUrl: 'sqlite::memory:', jwt: c.jwt, logLevel: 'silent' }).then(
        async (app) => {
          await app.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).option).toBe(c.option);
    });
  }

  it('a JWKS URL or public key without an audience stops start-up with a ConfigError naming RESTGRAPH_JWT_AUDIENCE', async () => {
    for (const jwt of [{ jwksUrl: `${jwksBase}/jwks.json`, issuer: ISSUER }, { publicKeys: [keyA.pem] }, { publicKeys: [keyA.pem], secret: SECRET, audience: [] }]) {
      const error: unknown = await buildApp({ databaseUrl: 'sqlite::memory:', jwt, logLevel: 'silent' }).then(
        async (app) => {
          await app.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).option).toBe('RESTGRAPH_JWT_AUDIENCE');
      expect((error as ConfigError).message).toMatch(/RESTGRAPH_JWT_ANY_AUDIENCE=true/);
    }
  });

  it('RESTGRAPH_JWT_ANY_AUDIENCE=true accepts a provider token for any audience (or none), deliberately', async () => {
    const options = optionsFromEnv({ RESTGRAPH_JWT_PUBLIC_KEY: keyA.pem, RESTGRAPH_JWT_ANY_AUDIENCE: 'true' });
    expect(options.jwt).toEqual({ publicKeys: [keyA.pem], anyAudience: true });
    const t = await appWith(options.jwt ?? {});
    try {
      expectOk(await get(t, await sign(keyA, { audience: 'another-application' })));
      expectOk(await get(t, await sign(keyA, { audience: null })));
    } finally {
      await t.close();
    }
  });

  it('RESTGRAPH_JWT_ANY_AUDIENCE=true beside RESTGRAPH_JWT_AUDIENCE is a ConfigError; a bad value too', async () => {
    const error: unknown = await buildApp({ databaseUrl: 'sqlite::memory:', jwt: { publicKeys: [keyA.pem], audience: AUDIENCE, anyAudience: true }, logLevel: 'silent' }).then(
      async (app) => {
        await app.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect((error as ConfigError).option).toBe('RESTGRAPH_JWT_ANY_AUDIENCE');
    expect(() => optionsFromEnv({ RESTGRAPH_JWT_SECRET: SECRET, RESTGRAPH_JWT_ANY_AUDIENCE: 'yes' })).toThrow(/RESTGRAPH_JWT_ANY_AUDIENCE/);
  });

  it('an HS256 secret needs no audience: tokens signed with this server\'s own secret were made for it', async () => {
    const t = await appWith({ secret: SECRET });
    try {
      expectOk(await get(t, await signHs(new TextEncoder().encode(SECRET), { audience: null })));
    } finally {
      await t.close();
    }
  });

  it('the environment maps to jwt options', () => {
    const options = optionsFromEnv({
      RESTGRAPH_JWKS_URL: 'https://idp.test/.well-known/jwks.json',
      RESTGRAPH_JWT_ISSUER: 'https://idp.test/',
      RESTGRAPH_JWT_AUDIENCE: 'api-1, api-2',
      RESTGRAPH_JWT_SCOPES_CLAIM: 'permissions',
      RESTGRAPH_JWT_SECRET: SECRET,
      RESTGRAPH_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nabc\\n-----END PUBLIC KEY-----',
    });
    expect(options.jwt).toEqual({
      jwksUrl: 'https://idp.test/.well-known/jwks.json',
      issuer: 'https://idp.test/',
      audience: ['api-1', 'api-2'],
      scopesClaim: 'permissions',
      secret: SECRET,
      publicKeys: ['-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----'],
    });
  });

  it('JWT options without any key are a ConfigError', () => {
    expect(() => optionsFromEnv({ RESTGRAPH_JWT_ISSUER: 'https://idp.test/' })).toThrow(ConfigError);
  });
});
