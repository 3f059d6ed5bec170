import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * The local provider's users: alice's address is verified, bob's is not, carol has none; dora's
 * comes with Microsoft Entra's `xms_edov` instead of `email_verified` (honoured from Entra only);
 * erin's is verified, written in mixed case.
 */
export const PROVIDER_USERS: Record<string, Record<string, unknown>> = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Liddell' },
  bob: { email: 'bob@example.com', email_verified: false, name: 'Bob' },
  carol: { name: 'Carol' },
  dora: { email: 'dora@example.com', xms_edov: true, name: 'Dora' },
  erin: { email: 'Erin@Example.COM', email_verified: true, name: 'Erin' },
};

export const CLIENT_ID = 'restgraph-test';
export const CLIENT_SECRET = 'a-client-secret-for-the-oidc-tests';

export interface LocalProvider {
  issuer: string;
  close: () => Promise<void>;
}

/**
 * An OpenID Connect provider (`oidc-provider`, its development login and consent pages) on a
 * random loopback port, with one confidential client allowed to send users back to `redirectUris`.
 */
export async function startLocalProvider(redirectUris: string[]): Promise<LocalProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: redirectUris, response_types: ['code'], grant_types: ['authorization_code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'] },
    findAccount: (_ctx, id) => (PROVIDER_USERS[id] === undefined ? undefined : { accountId: id, claims: () => ({ sub: id, ...PROVIDER_USERS[id] }) }),
    cookies: { keys: ['a-cookie-key-for-the-oidc-tests'] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    // Short lives, stated (the provider asks for them).
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
  });
  const handle = provider.callback();
  server.on('request', (request, response) => {
    void handle(request, response);
  });
  return {
    issuer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser's cookies for the provider's host (paths ignored: one host, one test). */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const equals = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
    }
  }
  get header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Plays the browser at the provider: follows its redirects by hand from `authorizationUrl`, signs
 * in as `login` and consents (or aborts at the first page), and returns the URL the provider sends
 * the browser back to (the callback, with `code` and `state`, or an error).
 */
export async function signInAtProvider(authorizationUrl: string, login: string, options: { abort?: boolean } = {}): Promise<URL> {
  const jar = new CookieJar();
  let url = new URL(authorizationUrl);
  const origin = url.origin;
  for (let step = 0; step < 20; step++) {
    if (url.origin !== origin) return url;
    let response: Response;
    const interaction = /^\/interaction\/[^/]+$/.test(url.pathname);
    if (interaction) {
      const page = await fetch(url, { headers: { cookie: jar.header }, redirect: 'manual' });
      jar.take(page);
      const html = await page.text();
      if (options.abort === true) {
        response = await fetch(new URL(`${url.pathname}/abort`, origin), { headers: { cookie: jar.header }, redirect: 'manual' });
      } else {
        const prompt = html.includes('value="login"') ? 'login' : 'consent';
        const body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt });
        response = await fetch(url, { method: 'POST', body, headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
      }
    } else {
      response = await fetch(url, { headers: { cookie: jar.header }, redirect: 'manual' });
    }
    jar.take(response);
    const location = response.headers.get('location');
    if (location === null) throw new Error(`the provider answered ${response.status} at ${url.href} without a redirect: ${await response.text()}`);
    url = new URL(location, url);
  }
  throw new Error('the provider redirected more than 20 times');
}
