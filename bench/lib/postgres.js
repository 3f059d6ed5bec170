// PostgreSQL for the benchmark: every server prepared on PostgreSQL gets a database of its own,
// created empty (`rg_bench_<pid>_<random>`) on the server BENCH_POSTGRES_URL names and dropped
// when that server is done. The databases still open when the harness exits (an error, a
// signal, BENCH_TIMEOUT) are dropped by dropDatabasesNow() from its exit handler.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** A database the bench connects to in order to create and drop its own; the role needs CREATEDB. */
export const adminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const NAME = /^rg_bench_[a-z0-9_]+$/;
const dropScript = fileURLToPath(new URL('./drop-databases.js', import.meta.url));
/** Databases created and not dropped yet. */
const open = new Set();

/** The URL without its password, for messages. */
export function safeUrl(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** The URL of database `name` on the same server (same user, host and parameters). */
export function databaseUrl(name) {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs `work(client)` on a connection to `url`, then closes it. */
export async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

let availability;
/**
 * Null when PostgreSQL (13 or later) answers at BENCH_POSTGRES_URL and its role may create
 * databases, else the reason the PostgreSQL servers are skipped. Asked once per run.
 */
export function postgresUnavailable() {
  availability ??= withClient(adminUrl, async (client) => {
    const { rows } = await client.query(
      "select current_setting('server_version_num')::int as num, current_setting('server_version') as version, " +
        '(select rolcreatedb or rolsuper from pg_roles where rolname = current_user) as may_create',
    );
    const { num, version, may_create: mayCreate } = rows[0];
    if (num < 130000) return `PostgreSQL ${version} at ${safeUrl(adminUrl)} is older than 13`;
    if (!mayCreate) return `the role of ${safeUrl(adminUrl)} may not create databases (CREATEDB)`;
    serverVersion = version;
    return null;
  }).catch((error) => `PostgreSQL not reachable at ${safeUrl(adminUrl)} (${error.message || error.code}; set BENCH_POSTGRES_URL)`);
  return availability;
}
let serverVersion = null;
/** The server's version, once postgresUnavailable() found it available. */
export const postgresVersion = () => serverVersion;

/** Creates an empty database; resolves to { name, url }. */
export async function createDatabase() {
  const name = `rg_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  open.add(name);
  await withClient(adminUrl, (client) => client.query(`create database "${name}"`));
  return { name, url: databaseUrl(name) };
}

/** Drops a database made by createDatabase(), cutting any connection still open to it. */
export async function dropDatabase(name) {
  if (!NAME.test(name)) throw new Error(`not a bench database: ${name}`);
  await withClient(adminUrl, (client) => client.query(`drop database if exists "${name}" with (force)`));
  open.delete(name);
}

/**
 * Synchronous, for the harness's exit handler: drops every database not dropped yet (in a
 * child process, since an exit handler cannot wait for a connection).
 */
export function dropDatabasesNow() {
  if (!open.size) return;
  const names = [...open];
  open.clear();
  const r = spawnSync(process.execPath, [dropScript, adminUrl, ...names], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 30_000 });
  if (r.status !== 0) console.error(`bench: could not drop PostgreSQL database(s) ${names.join(', ')}: drop them by hand`);
}

/**
 * Inserts the seed rows into an existing `users` table in one transaction (multi-row INSERTs of
 * 1,000 rows), moves the identity on past them so creates continue after the seeded ids, and
 * runs VACUUM ANALYZE (statistics, hint bits and visibility map set before the first read).
 */
export async function seedPostgres(url, users) {
  await withClient(url, async (client) => {
    await client.query('begin');
    const BATCH = 1000;
    for (let start = 0; start < users.length; start += BATCH) {
      const rows = users.slice(start, start + BATCH);
      const values = [];
      const tuples = rows.map((u, i) => {
        values.push(u.id, u.name, u.email, u.createdAt, u.updatedAt);
        const p = i * 5;
        return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5})`;
      });
      await client.query(`insert into users (id, name, email, "createdAt", "updatedAt") values ${tuples.join(', ')}`, values);
    }
    await client.query("select setval(pg_get_serial_sequence('users', 'id'), max(id)) from users");
    await client.query('commit');
    await client.query('vacuum analyze users');
  });
}

/**
 * The `users` table and its indexes as SQL statements rebuilt from PostgreSQL's catalog: what
 * restgraph's migration made, replayable on another database (foreign keys left out: the
 * tables they name are not there). Also the layout shown in latest.json.
 */
export async function describePostgres(url) {
  return withClient(url, async (client) => {
    const columns = await client.query(`
      select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as not_null,
             a.attidentity as identity, pg_get_expr(d.adbin, d.adrelid) as default_value,
             case when a.attcollation <> t.typcollation then c.collname end as collation
        from pg_attribute a
        join pg_type t on t.oid = a.atttypid
        left join pg_collation c on c.oid = a.attcollation
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where a.attrelid = 'users'::regclass and a.attnum > 0 and not a.attisdropped
       order by a.attnum`);
    if (!columns.rows.length) throw new Error('no users table');
    const constraints = await client.query(`
      select conname, pg_get_constraintdef(oid) as def from pg_constraint
       where conrelid = 'users'::regclass and contype in ('p', 'u', 'c') order by contype, conname`);
    const indexes = await client.query(`
      select indexdef from pg_indexes
       where schemaname = current_schema() and tablename = 'users'
         and indexname not in (select conname from pg_constraint where conrelid = 'users'::regclass)
       order by indexname`);
    const q = (id) => `"${id.replaceAll('"', '""')}"`;
    const defs = columns.rows.map((c) =>
      [
        q(c.name),
        c.type,
        c.collation ? `collate ${q(c.collation)}` : '',
        c.identity === 'a' ? 'generated always as identity' : c.identity === 'd' ? 'generated by default as identity' : '',
        c.default_value && !c.identity ? `default ${c.default_value}` : '',
        c.not_null ? 'not null' : '',
      ]
        .filter(Boolean)
        .join(' '),
    );
    for (const k of constraints.rows) defs.push(`constraint ${q(k.conname)} ${k.def}`);
    return [`create table users (${defs.join(', ')})`, ...indexes.rows.map((r) => r.indexdef)];
  });
}

/** Runs statements (describePostgres's) on database `url`, in one transaction. */
export async function applyDdl(url, statements) {
  await withClient(url, async (client) => {
    await client.query('begin');
    for (const sql of statements) await client.query(sql);
    await client.query('commit');
  });
}
