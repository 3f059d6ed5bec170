// Deterministic seed data: users, written identically to SQLite (restgraph, baseline), and a
// json-server db.json of posts (restgraph-dbjson and json-server serve the same file).
import Database from 'better-sqlite3';

/** Small seeded PRNG (mulberry32) so every run and every server gets the same rows. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * N users with ids 1..N. Names are 'user-' + a shuffled number, so ORDER BY name
 * does not follow id order; names and emails are unique.
 */
export function makeUsers(size, seed = 42) {
  const perm = permutation(size, prng(seed));
  const base = Date.parse('2024-01-01T00:00:00.000Z');
  return perm.map((n, i) => {
    const stamp = new Date(base + i * 1000).toISOString();
    return {
      id: i + 1,
      name: `user-${n}`,
      email: `user${i + 1}@example.com`,
      createdAt: stamp,
      updatedAt: stamp,
    };
  });
}

/** Inserts the rows into an existing `users` table, in one transaction. */
export function seedSqlite(file, users) {
  const db = new Database(file);
  try {
    const insert = db.prepare(
      'INSERT INTO users (id, name, email, createdAt, updatedAt) VALUES (@id, @name, @email, @createdAt, @updatedAt)',
    );
    db.transaction((rows) => {
      for (const row of rows) insert.run(row);
    })(users);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** The `users` table and its indexes as SQLite stores them (for the report). */
export function describeSqlite(file) {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare("SELECT sql FROM sqlite_master WHERE tbl_name = 'users' AND sql IS NOT NULL ORDER BY type DESC, name")
      .all()
      .map((r) => r.sql.replace(/\s+/g, ' '));
  } finally {
    db.close();
  }
}

/** A random id of the seeded rows (1..size), from a scenario's context. */
export const randomSeededId = ({ size, random }) => 1 + Math.floor(random() * size);

/** A shuffled 1..size: unique values in an order unrelated to the ids. */
function permutation(size, random) {
  const perm = Array.from({ length: size }, (_, i) => i + 1);
  for (let i = size - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  return perm;
}

/**
 * A json-server db.json as its README shows one (posts, comments, profile), with `size` posts
 * (ids 1..size, numbers as json-server 0.17 writes them) and a comment for every tenth post.
 * Views are unique (a shuffled 1..size), so a list sorted by views has one right answer.
 */
export function makePostsDb(size, seed = 7) {
  const random = prng(seed);
  const views = permutation(size, random);
  const authors = ['typicode', 'alice', 'bob', 'carol', 'dave'];
  const posts = views.map((v, i) => ({ id: i + 1, title: `post ${i + 1}`, views: v, author: authors[i % authors.length] }));
  const comments = Array.from({ length: Math.ceil(size / 10) }, (_, i) => ({ id: i + 1, text: `a comment about post ${i * 10 + 1}`, postId: i * 10 + 1 }));
  return { posts, comments, profile: { name: 'typicode' } };
}

/** The db.json text, indented as json-server itself writes it. */
export const postsDbText = (db) => JSON.stringify(db, null, 2);

/** The ids of the first `limit` posts by views, highest first. */
export function topByViews(posts, limit) {
  return [...posts]
    .sort((a, b) => b.views - a.views)
    .slice(0, limit)
    .map((p) => String(p.id));
}
