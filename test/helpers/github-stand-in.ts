import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface GithubStandIn {
  /** Its web address, as a GitHub Enterprise Server's (the API under /api/v3). */
  url: string;
  /** Who signs in at the next authorization request. */
  user: GithubUser;
  close: () => Promise<void>;
}

/**
 * GitHub's OAuth web flow and the two API calls restgraph makes, as GitHub documents them
 * (https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps), on a
 * loopback port: the authorize endpoint signs `user` in at once; the token endpoint checks the
 * client, the code (once) and the PKCE verifier against the S256 challenge.
 */
export async function startGithubStandIn(clientId: string, clientSecret: string, user: GithubUser): Promise<GithubStandIn> {
  const codes = new Map<string, { challenge: string; redirectUri: string; user: GithubUser }>();
  const tokens = new Map<string, GithubUser>();
  const standIn = { user } as GithubStandIn;
  const send = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', standIn.url);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
        const q = url.searchParams;
        if (q.get('client_id') !== clientId || q.get('code_challenge_method') !== 'S256') return send(res, 400, { error: 'bad authorize request' });
        const code = randomUUID();
        const redirectUri = q.get('redirect_uri') ?? '';
        codes.set(code, { challenge: q.get('code_challenge') ?? '', redirectUri, user: standIn.user });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        return res.writeHead(302, { location: back.href }).end();
      }
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const challenge = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
        if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return send(res, 401, { error: 'invalid_client' });
        if (grant === undefined || grant.challenge !== challenge || grant.redirectUri !== form.get('redirect_uri')) return send(res, 400, { error: 'bad_verification_code' });
        const token = `gho_${randomUUID()}`;
        tokens.set(token, grant.user);
        return send(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const signedIn = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (signedIn === undefined) return send(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/api/v3/user') return send(res, 200, { id: signedIn.id, login: signedIn.login, name: signedIn.name });
      if (url.pathname === '/api/v3/user/emails') return send(res, 200, signedIn.emails.map((e) => ({ ...e, visibility: null })));
      return send(res, 404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standIn.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return standIn;
}
