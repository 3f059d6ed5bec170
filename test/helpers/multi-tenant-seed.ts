import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { json, TEST_ADMIN_TOKEN } from './test-app.js';
import { bearerJwt } from './rule-tokens.js';
import { USERS, postsOf, type Post, type User, type Who } from './multi-tenant-model.js';

/**
 * The rows of the multi-tenant matrix (test/access-rules-matrix*.test.ts) on a fresh server of
 * examples/multi-tenant.yaml: the users (made by the admin), each one's published and draft post
 * (written by its own JWT, with the values the presets would set), and a guest post, acme's,
 * written by globex's gus, whom acme cannot read.
 */
export async function seedMultiTenant(app: FastifyInstance): Promise<{ users: User[]; posts: Post[] }> {
  const users: User[] = [];
  const posts: Post[] = [];
  for (const user of USERS) {
    const created = await app.inject({ method: 'POST', url: '/users', payload: user });
    expect(created.statusCode, created.body).toBe(201);
    users.push(json<User>(created));
  }
  for (const user of users) {
    const headers = { authorization: await bearerJwt({ sub: String(user.id), org: user.orgId }) };
    for (const post of postsOf(user)) {
      const created = await app.inject({ method: 'POST', url: '/posts', headers, payload: post });
      expect(created.statusCode, created.body).toBe(201);
      posts.push(json<Post>(created));
    }
  }
  const guest = await app.inject({ method: 'POST', url: '/posts', payload: { title: 'gus guest report', body: 'a visit', published: true, views: 7, authorId: 3, orgId: 'acme' } });
  expect(guest.statusCode, guest.body).toBe(201);
  posts.push(json<Post>(guest));
  return { users, posts };
}

/** The Authorization header of a principal: '' for none; undefined when it cannot be made (yet). */
export async function credentialOf(app: FastifyInstance, who: Who): Promise<string | undefined> {
  switch (who.credential.kind) {
    case 'none':
      return '';
    case 'admin':
      return `Bearer ${TEST_ADMIN_TOKEN}`;
    case 'jwt':
      return bearerJwt(who.credential.claims);
    case 'key': {
      const { subject, scopes, claims } = who.credential;
      const created = await app.inject({ method: 'POST', url: '/v1/tokens', payload: { name: 'matrix', scopes, claims, ...(subject === undefined ? {} : { subject }) } });
      return created.statusCode === 201 ? `Bearer ${json<{ key: string }>(created).key}` : undefined;
    }
  }
}
