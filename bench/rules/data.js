// The rows of the rule benchmarks (bench/rules.js): the same posts in `posts` (with the rule) and
// `plainPosts` (without), deterministic. Whether a post is published and who wrote it are
// functions of its id, so the load generator (bench/load.js) can draw ids the token may read
// without the rows:
//
//   published   odd ids (half the posts)
//   authorId    one of 1,000 authors (`user-1` … `user-1000`), ~rows / 1,000 posts each
//   title       `post-<n>`, n a shuffled 1..rows (the title order is not the id order)
import { prng } from '../lib/seed.js';

/** The subject of the token every request carries. */
export const SUBJECT = 'user-7';
const AUTHORS = 1000;

export const isPublished = (id) => id % 2 === 1;
export const authorOf = (id) => `user-${1 + ((id * 7919) % AUTHORS)}`;
/** Whether the token's subject may read post `id` under `published = true or authorId = @auth.sub`. */
export const visible = (id) => isPublished(id) || authorOf(id) === SUBJECT;

export function makeRuleData(rows, seed = 13) {
  const random = prng(seed);
  const order = Array.from({ length: rows }, (_, i) => i + 1);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const posts = order.map((n, i) => ({
    id: i + 1,
    title: `post-${String(n).padStart(7, '0')}`,
    published: isPublished(i + 1),
    authorId: authorOf(i + 1),
    body: `the body of post ${i + 1}`,
  }));
  return { posts };
}

/** The rows as `restgraph export data` writes them (NDJSON), for `restgraph import data`: each post in both resources. */
export function exportText({ posts }) {
  const lines = [];
  for (const resource of ['posts', 'plainPosts']) for (const record of posts) lines.push(JSON.stringify({ resource, record }));
  return `${lines.join('\n')}\n`;
}
