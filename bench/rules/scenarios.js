// The rule benchmarks' scenarios (bench/rules.js), in the shape of bench/queries/scenarios.js:
// each pair is the same request to `posts` (rule `published = true or authorId = @auth.sub` on
// its lists and reads) and to `plainPosts` (no rule), with the same JWT; the ruled one's ratio to
// the plain one has the target 0.85. Get-by-id draws a post the token may read (a published one,
// or one of its subject's drafts), the same ids on both sides.
import { sameIds } from '../lib/check-requests.js';
import { SUBJECT, visible } from './data.js';

const LIMIT = 20;
export const RULE_TARGET = 0.85;

/** A seeded post the token may read: a drawn id, or the published one before it when it may not. */
const readableId = ({ size, random }) => {
  const id = 1 + Math.floor(random() * size);
  return visible(id) ? id : id - 1; // a hidden id is even: the odd id before it is published
};

const listPath = (resource) => `/${resource}?sort=title&limit=${LIMIT}`;

/** Ids of the first `LIMIT` posts `keep` accepts, in title order. */
const firstPosts = (posts, keep) =>
  posts
    .filter(keep)
    .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : a.id - b.id))
    .slice(0, LIMIT)
    .map((p) => p.id);

/** A published post, a draft of the token's subject and someone else's draft, read one by one. */
async function checkGets(request, data, resource, ruled) {
  const draftOf = (own) => data.posts.find((p) => !p.published && (p.authorId === SUBJECT) === own);
  const cases = [
    [data.posts.find((p) => p.published), 200],
    [draftOf(true), 200],
    [draftOf(false), ruled ? 404 : 200],
  ];
  const problems = [];
  for (const [post, status] of cases) {
    const res = await request('GET', `/${resource}/${post.id}`);
    if (res.status !== status) problems.push(`GET /${resource}/${post.id} -> ${res.status}, expected ${status}`);
    else if (status === 200 && res.json?.title !== post.title) problems.push(`GET /${resource}/${post.id}: another row`);
  }
  return problems;
}

export const ruleScenarios = [
  {
    name: 'get-by-id (no rule)',
    method: 'GET',
    path: (ctx) => `/plainPosts/${readableId(ctx)}`,
    check: ({ request, data }) => checkGets(request, data, 'plainPosts', false),
  },
  {
    name: 'get-by-id (rule)',
    method: 'GET',
    path: (ctx) => `/posts/${readableId(ctx)}`,
    versus: 'get-by-id (no rule)',
    target: RULE_TARGET,
    check: ({ request, data }) => checkGets(request, data, 'posts', true),
  },
  {
    name: 'list sorted limit 20 (no rule)',
    method: 'GET',
    path: listPath('plainPosts'),
    check: ({ request, data }) => sameIds(request, listPath('plainPosts'), firstPosts(data.posts, () => true)),
  },
  {
    name: 'list sorted limit 20 (rule)',
    method: 'GET',
    path: listPath('posts'),
    versus: 'list sorted limit 20 (no rule)',
    target: RULE_TARGET,
    check: ({ request, data }) => sameIds(request, listPath('posts'), firstPosts(data.posts, (p) => p.published || p.authorId === SUBJECT)),
  },
];
