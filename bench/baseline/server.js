// Hand-written Fastify 5 + better-sqlite3 server: the "ceiling for a Node stack"
// that restgraph is compared against in bench/run.js. It serves the same routes
// on the same table layout, with nothing restgraph adds (no validation layer,
// no content negotiation, no logging, no query builder).
//
//   GET  /users/:id                  200 row as JSON, or 404
//   GET  /users?sort=name&limit=20   bare JSON array, ORDER BY name, id LIMIT n
//   POST /users {name, email}        201 + Location + created row
//   GET  /readyz                     200 when the database is open
//
// SQLite settings: WAL, synchronous = NORMAL (restgraph's RESTGRAPH_SQLITE_SYNCHRONOUS=NORMAL;
// its default is FULL, which waits for the disk at every commit), foreign_keys = ON; statements
// prepared once at start.
//
// Env: PORT (default 3000), HOST (default 127.0.0.1), DB_PATH (default ./baseline.db).
import Fastify from 'fastify';
import Database from 'better-sqlite3';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const dbPath = process.env.DB_PATH ?? './baseline.db';

const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
// Create the table only when missing: bench/run.js gives this database restgraph's own
// `users` DDL when restgraph is built, so both run on the identical layout. This one
// mirrors examples/example-schema.yaml (name indexed, email unique).
const hasUsers = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'users'").get();
if (!hasUsers) {
  db.exec(`
    CREATE TABLE users (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL,
      email TEXT,
      bio TEXT,
      createdAt TEXT NOT NULL,
      updatedAt TEXT NOT NULL
    );
    CREATE UNIQUE INDEX users_email_unique ON users (email);
    CREATE INDEX users_name ON users (name);
  `);
}

// Every column, as restgraph returns them (and robust to its layout).
const columns = '*';
const byId = db.prepare(`SELECT ${columns} FROM users WHERE id = ?`);
const sortable = ['id', 'name', 'email', 'createdAt', 'updatedAt'];
const listBy = new Map(
  sortable.map((field) => [
    field,
    db.prepare(`SELECT ${columns} FROM users ORDER BY "${field}", id LIMIT ? OFFSET ?`),
  ]),
);
const insertReturning = db.prepare(
  `INSERT INTO users (name, email, createdAt, updatedAt) VALUES (?, ?, ?, ?) RETURNING ${columns}`,
);
// In a transaction, not on its own: an INSERT … RETURNING run in autocommit mode through
// better-sqlite3 keeps every WAL checkpoint from completing, so the WAL grows without bound
// (1.3 GB in one 5-second create run). That is no server to measure against.
const insert = db.transaction((name, email, createdAt, updatedAt) => insertReturning.get(name, email, createdAt, updatedAt));

const app = Fastify({ logger: false });

app.get('/readyz', async () => ({ status: 'ok' }));

app.get('/users/:id', async (request, reply) => {
  const id = Number(request.params.id);
  const row = Number.isSafeInteger(id) ? byId.get(id) : undefined;
  if (row === undefined) return reply.code(404).send({ error: 'Not Found' });
  return row;
});

app.get('/users', async (request, reply) => {
  const { sort = 'id', limit = '20', offset = '0' } = request.query;
  const stmt = listBy.get(sort);
  const n = Number(limit);
  const skip = Number(offset);
  if (!stmt || !Number.isInteger(n) || n < 1 || n > 100 || !Number.isInteger(skip) || skip < 0) {
    return reply.code(400).send({ error: 'Bad Request' });
  }
  return stmt.all(n, skip);
});

app.post('/users', async (request, reply) => {
  const body = request.body;
  if (typeof body?.name !== 'string' || typeof body?.email !== 'string') {
    return reply.code(400).send({ error: 'Bad Request' });
  }
  const now = new Date().toISOString();
  let row;
  try {
    row = insert(body.name, body.email, now, now);
  } catch (err) {
    if (err.code === 'SQLITE_CONSTRAINT_UNIQUE') return reply.code(409).send({ error: 'Conflict' });
    throw err;
  }
  return reply.code(201).header('location', `/users/${row.id}`).send(row);
});

const shutdown = async () => {
  await app.close();
  db.close();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

await app.listen({ port, host });
