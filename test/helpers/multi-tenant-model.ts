/**
 * The in-memory model of examples/multi-tenant.yaml's rules, written from the schema's text, that
 * test/access-rules-matrix.test.ts holds every answer of the server to: which users and posts a
 * principal sees, which emails, and which writes it may make.
 */

export interface User {
  id: number;
  name: string;
  email: string;
  orgId: string;
}

export interface Post {
  id: number;
  title: string;
  body: string;
  published: boolean;
  views: number;
  authorId: number;
  orgId: string;
}

/** Who asks, as the rules see it. */
export interface Who {
  name: string;
  /** The subject: a user's id, as text. */
  sub?: string;
  org?: string;
  scopes: readonly string[];
  admin: boolean;
  anonymous: boolean;
  /** How the credential is presented. */
  credential: { kind: 'none' } | { kind: 'admin' } | { kind: 'jwt'; claims: Record<string, unknown> } | { kind: 'key'; subject?: string; scopes: string[]; claims: Record<string, string> };
}

/** Three tenants, two users each but the last; a user's id is its tokens' subject. */
export const USERS: Omit<User, 'id'>[] = [
  { name: 'alice', email: 'alice@acme.example', orgId: 'acme' },
  { name: 'amy', email: 'amy@acme.example', orgId: 'acme' },
  { name: 'gus', email: 'gus@globex.example', orgId: 'globex' },
  { name: 'gina', email: 'gina@globex.example', orgId: 'globex' },
  { name: 'ian', email: 'ian@initech.example', orgId: 'initech' },
  { name: 'iris', email: 'iris@initech.example', orgId: 'initech' },
];

/** Each user's posts: a published report and a draft, written by the user's own JWT. */
export function postsOf(user: User): Omit<Post, 'id'>[] {
  return [
    { title: `${user.name} published report`, body: 'quarterly figures', published: true, views: user.id * 10, authorId: user.id, orgId: user.orgId },
    { title: `${user.name} draft notes`, body: 'unfinished secret', published: false, views: user.id, authorId: user.id, orgId: user.orgId },
  ];
}

/** The principals of the matrix (the users are 1 alice, 2 amy of acme; 3 gus, 4 gina of globex; 5 ian, 6 iris of initech). */
export const PRINCIPALS: Who[] = [
  { name: 'anonymous', scopes: [], admin: false, anonymous: true, credential: { kind: 'none' } },
  { name: 'author (alice, acme)', sub: '1', org: 'acme', scopes: [], admin: false, anonymous: false, credential: { kind: 'jwt', claims: { sub: '1', org: 'acme' } } },
  { name: 'other author of the same tenant (amy, acme)', sub: '2', org: 'acme', scopes: [], admin: false, anonymous: false, credential: { kind: 'jwt', claims: { sub: '2', org: 'acme' } } },
  { name: 'user of another tenant (gus, globex)', sub: '3', org: 'globex', scopes: [], admin: false, anonymous: false, credential: { kind: 'jwt', claims: { sub: '3', org: 'globex' } } },
  { name: 'admin', scopes: ['admin'], admin: true, anonymous: false, credential: { kind: 'admin' } },
  {
    name: 'API key with claims (ian, initech, posts:moderate)',
    sub: '5',
    org: 'initech',
    scopes: ['posts:moderate'],
    admin: false,
    anonymous: false,
    credential: { kind: 'key', subject: '5', scopes: ['posts:moderate'], claims: { org: 'initech' } },
  },
  {
    name: 'JWT with claims and scopes (gina, globex, users:admin posts:moderate)',
    sub: '4',
    org: 'globex',
    scopes: ['users:admin', 'posts:moderate'],
    admin: false,
    anonymous: false,
    credential: { kind: 'jwt', claims: { sub: '4', org: 'globex', scope: 'users:admin posts:moderate' } },
  },
  { name: 'JWT with an org claim and no subject (initech)', org: 'initech', scopes: [], admin: false, anonymous: false, credential: { kind: 'jwt', claims: { org: 'initech' } } },
];

const sameOrg = (who: Who, row: { orgId: string }): boolean => who.org !== undefined && row.orgId === who.org;
const isSubject = (who: Who, id: number): boolean => who.sub !== undefined && Number(who.sub) === id;

/** users.rules.list (read defaults to it). */
export function seesUser(who: Who, user: User): boolean {
  return who.admin || sameOrg(who, user);
}

/** users.fields.email.read. */
export function seesEmail(who: Who, user: User): boolean {
  return who.admin || isSubject(who, user.id) || who.scopes.includes('users:admin');
}

/** users.fields.email.write. */
export function writesEmail(who: Who): boolean {
  return who.admin || who.scopes.includes('users:admin');
}

/** The status of a REST write of a user, by the model (`email` in `change`: its field rule too). */
export function userWriteStatus(who: Who, operation: 'create' | 'update' | 'delete', before: User | undefined, after: Partial<User>): number {
  if (who.anonymous) return 401;
  const admin = who.admin || who.scopes.includes('users:admin');
  if (operation === 'create') return who.admin || (admin && sameOrg(who, after as User)) ? 201 : 403;
  const row = before as User;
  if (!seesUser(who, row)) return 404;
  if (operation === 'delete') return who.admin || admin ? 204 : 403;
  const rowRule = (user: User): boolean => who.admin || (sameOrg(who, user) && (isSubject(who, user.id) || admin));
  if (!rowRule(row) || !rowRule({ ...row, ...after })) return 403;
  return after.email !== undefined && !writesEmail(who) ? 403 : 200;
}

/** posts.rules.list (read defaults to it). */
export function seesPost(who: Who, post: Post): boolean {
  return who.admin || (sameOrg(who, post) && (post.published || isSubject(who, post.authorId)));
}

/** posts.rules.create and update, on the row as stored (and update on the row before too). */
export function writesPost(who: Who, post: Pick<Post, 'orgId' | 'authorId'>): boolean {
  return who.admin || (sameOrg(who, post) && isSubject(who, post.authorId));
}

/** posts.rules.delete. */
export function deletesPost(who: Who, post: Post): boolean {
  return who.admin || (sameOrg(who, post) && (isSubject(who, post.authorId) || who.scopes.includes('posts:moderate')));
}

/** The status a REST write of a post answers, by the model: 401 without a credential, 404 for a row it cannot read, 403 for one a rule refuses. */
export function postWriteStatus(who: Who, operation: 'create' | 'update' | 'delete', before: Post | undefined, after: Pick<Post, 'orgId' | 'authorId'> | undefined): number {
  if (who.anonymous) return 401;
  if (operation === 'create') return writesPost(who, after as Post) ? 201 : 403;
  const row = before as Post;
  if (!seesPost(who, row)) return 404;
  if (operation === 'delete') return deletesPost(who, row) ? 204 : 403;
  return writesPost(who, row) && writesPost(who, after as Post) ? 200 : 403;
}

/** The aggregate by organisation of the posts `who` sees: count and sum of views, ascending orgId. */
export function postsByOrg(who: Who, posts: readonly Post[]): { group: { orgId: string }; count: number; sum: { views: number } }[] {
  const groups = new Map<string, { count: number; views: number }>();
  for (const post of posts.filter((p) => seesPost(who, p))) {
    const group = groups.get(post.orgId) ?? { count: 0, views: 0 };
    group.count++;
    group.views += post.views;
    groups.set(post.orgId, group);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([orgId, g]) => ({ group: { orgId }, count: g.count, sum: { views: g.views } }));
}
