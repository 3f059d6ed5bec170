// Deterministic seed data, written identically to SQLite (restgraph, baseline)
// and to a json-server db.json.
import { writeFileSync } from 'node:fs';
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
  const random = prng(seed);
  const perm = Array.from({ length: size }, (_, i) => i + 1);
  for (let i = size - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
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

export function writeJsonServerDb(file, users) {
  writeFileSync(file, JSON.stringify({ users }));
}
