// The servers under test. Add one by appending an entry:
//
//   name           column label (also the key in results/latest.json)
//   unavailable()  null, or the reason it is skipped (e.g. not built, PostgreSQL not
//                  reachable); may return a promise
//   prepare(ctx)   creates and seeds its data in ctx.dir (or in a database of its own);
//                  resolves to { layout?, start, headers?, dbProcessMatch?, cleanup? }
//                  where start() resolves to { url, pid, readyUrl, stop }; stop() resolves
//                  to the exit status; readyUrl is a cheap GET answering 200 when idle;
//                  cleanup() (after the last stop) removes what prepare made outside ctx.dir;
//                  dbProcessMatch: a string in the command line of the database server's
//                  processes working for this server (their CPU is reported apart).
//
// start(how) takes optional { launcher, readyTimeoutMs } (see startNode), used by
// bench/instructions.js to run the server under valgrind.
//
// BENCH_BEFORE and BENCH_VARIANTS (bench/lib/variants.js) add servers: restgraph (or the
// baseline) served from another checkout, by another Node binary, or with more environment.
//
// ctx = { dir, size, users, shared }: users = the seed rows (ids 1..size), shared = an
// object the servers of one size and round may use to pass things on (restgraph leaves its
// `users` DDL there so the baseline gets the identical table layout; restgraph-pg does the
// same for baseline-pg; the db.json servers the text of their db.json, made once).
//
// The db.json servers (restgraph-dbjson, json-server, json-server-1x) serve a json-server
// db.json of `size` posts (bench/lib/seed.js: makePostsDb), not the users: each gets its own
// copy of the same file in a directory of its own, since json-server writes its copy back on
// every write and restgraph imports its copy into ./data/db.db there.
//
// Every server runs pinned to CPU 0 (when taskset exists), one at a time. The PostgreSQL
// servers (restgraph-pg, baseline-pg) each get a fresh, empty database (bench/lib/postgres.js),
// dropped when they are done; PostgreSQL itself is not pinned.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { variants } from './lib/variants.js';
import { describeExit, freePort, startProcess, stopProcess, waitReady } from './lib/proc.js';
import { applyDdl, createDatabase, describePostgres, dropDatabase, postgresUnavailable, seedPostgres } from './lib/postgres.js';
import { describeSqlite, makePostsDb, postsDbText, seedSqlite } from './lib/seed.js';

export const SERVER_CPU = 0;

const root = fileURLToPath(new URL('..', import.meta.url));
const restgraphCli = join(root, 'dist/cli/main.js');
const baselinePgScript = join(root, 'bench/baseline-pg/server.js');
/** json-server 0.17.4 (npm:json-server@0.17.4), the line most projects install, and 1.0.0-beta.15. */
const jsonServer017Bin = join(root, 'node_modules/json-server-017/lib/cli/bin.js');
const jsonServer1Bin = join(root, 'node_modules/json-server-1/lib/bin.js');

/**
 * Starts a Node server pinned to the server CPU and waits until `readyPath` answers 200.
 * `args(port)` and `env(port)` give its argv (after node) and its whole environment;
 * `launcher`, when given, is the command (and its arguments) node runs under, such as
 * `['valgrind', '--tool=callgrind']` (bench/instructions.js); `node`, the Node binary (default:
 * the one running the benchmark).
 */
export async function startNode({ name, args, env, cwd, readyPath, logFile, readyTimeoutMs, launcher, node = process.execPath }) {
  const port = await freePort();
  const [command, ...prefix] = launcher ?? [node];
  const child = startProcess(command, [...prefix, ...(launcher ? [node] : []), ...args(port)], {
    cpu: SERVER_CPU,
    cwd,
    logFile,
    env: env(port),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url + readyPath, child, { logFile, timeoutMs: readyTimeoutMs });
  } catch (error) {
    await stopProcess(child);
    throw new Error(`${name} did not start: ${error.message}`);
  }
  return { url, pid: child.pid, readyUrl: url + readyPath, stop: (graceMs) => stopProcess(child, graceMs) };
}

/** `restgraph serve` (the CLI `cli`) on a free loopback port with `env` as its whole environment, as startNode starts it. */
export const serveRestgraph = ({ name, cli = restgraphCli, node, env, logFile, how = {}, serveArgs = [], cwd = root }) =>
  startNode({
    ...how,
    name,
    node,
    // BENCH_SERVER_NODE_ARGS: flags for the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
    args: () => [...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []), cli, 'serve', ...serveArgs],
    env: (port) => ({ ...env, PORT: String(port), HOST: '127.0.0.1' }),
    cwd,
    readyPath: '/readyz',
    logFile,
  });

/** Start once (creates or migrates the schema), stop, seed the `users` table. */
export async function createAndSeed(start, dbFile, users, name) {
  await startAndStop(start, name);
  seedSqlite(dbFile, users);
}

async function startAndStop(start, name) {
  const first = await start();
  const exit = await first.stop(15_000);
  if (exit.code !== 0) throw new Error(`${name} did not exit 0 on SIGTERM (${describeExit(exit)})`);
}

/**
 * The same on a fresh PostgreSQL database of its own: `setup(database)` (may use the database
 * first, e.g. create tables) resolves to { start, ... }; start once, stop, seed. The database is
 * dropped by the result's cleanup(), or at once when anything here fails.
 */
async function preparePostgres(name, users, setup) {
  const database = await createDatabase();
  try {
    const prepared = await setup(database);
    await startAndStop(prepared.start, name);
    await seedPostgres(database.url, users);
    return {
      ...prepared,
      layout: await describePostgres(database.url),
      // The database's backends have its name in their process title.
      dbProcessMatch: database.name,
      cleanup: () => dropDatabase(database.name),
    };
  } catch (error) {
    await dropDatabase(database.name).catch(() => undefined); // else the exit handler drops it
    throw error;
  }
}

/** The example schema with users readable and writable without a token. */
function writePublicSchema(dir) {
  const text = readFileSync(join(root, 'examples/example-schema.yaml'), 'utf8').replace(
    /access: \{ read: \[users:read, users:write\], write: \[users:write\] \}/,
    'access: { read: public, write: public }',
  );
  if (!text.includes('read: public, write: public')) throw new Error('could not make the users resource public in the example schema');
  const file = join(dir, 'public-schema.yaml');
  writeFileSync(file, text);
  return file;
}

/** Runs the restgraph CLI to completion; resolves to its stdout. */
function runCli(cli, args, env, node = process.execPath) {
  return new Promise((resolve, reject) => {
    execFile(node, [cli, ...args], { env, cwd: root }, (error, stdout, stderr) => {
      if (error) reject(new Error(`restgraph ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * restgraph in its default configuration (logging on, to stdout, discarded), on a schema, with
 * an API key of the given scopes in every request when `apiKeyScopes` is set; on SQLite, or on
 * PostgreSQL when `postgres` is set.
 */
function restgraphServer({ name, schema, apiKeyScopes, postgres = false, extraEnv = {}, cli = restgraphCli, node = process.execPath }) {
  const built = () => (existsSync(cli) ? null : `${cli} not found (npm run build)`);
  return {
    name,
    unavailable: postgres ? async () => built() ?? (await postgresUnavailable()) : built,
    async prepare({ dir, users, shared }) {
      const logFile = join(dir, `${name}.stderr.log`);
      const environment = (databaseUrl) => {
        const env = { ...process.env, ...extraEnv, DATABASE_URL: databaseUrl };
        delete env.LOG_LEVEL;
        delete env.RESTGRAPH_LOG_FORMAT; // JSON lines, as measured: the readable form is for a terminal
        delete env.RESTGRAPH_ADMIN_TOKEN;
        if (schema === 'public') env.RESTGRAPH_SCHEMA = writePublicSchema(dir);
        else delete env.RESTGRAPH_SCHEMA;
        return env;
      };
      const starter = (env) => (how = {}) => serveRestgraph({ name, cli, node, env, logFile, how });
      const apiKeyHeaders = async (env) => {
        if (apiKeyScopes === undefined) return {};
        const out = await runCli(cli, ['token', 'create', '--scopes', apiKeyScopes, '--name', 'bench'], env, node);
        const key = out.trim().split('\n').at(-1);
        if (!key?.startsWith('rg_')) throw new Error(`token create printed no key: ${out}`);
        return { authorization: `Bearer ${key}` };
      };
      if (postgres) {
        let env;
        const prepared = await preparePostgres(name, users, (database) => {
          env = environment(database.url);
          return { start: starter(env) };
        });
        try {
          shared.pgUsersDdl ??= prepared.layout;
          return { ...prepared, headers: await apiKeyHeaders(env) };
        } catch (error) {
          await prepared.cleanup().catch(() => undefined);
          throw error;
        }
      }
      const dbFile = join(dir, `${name}.db`);
      const env = environment(`sqlite:${dbFile}`);
      const start = starter(env);
      await createAndSeed(start, dbFile, users, name);
      shared.usersDdl ??= describeSqlite(dbFile);
      return { layout: describeSqlite(dbFile), start, headers: await apiKeyHeaders(env) };
    },
  };
}

/** The hand-written server (bench/baseline/server.js of `checkout`, default this one) on SQLite, run by `node`. */
function baselineServer({ name, checkout = root, node = process.execPath, extraEnv = {} }) {
  const script = join(checkout, 'bench/baseline/server.js');
  return {
    name,
    unavailable: () => (existsSync(script) ? null : `${script} not found`),
    async prepare({ dir, users, shared }) {
      const dbFile = join(dir, `${name}.db`);
      if (shared.usersDdl) {
        // Same table and indexes as restgraph's migration made.
        const db = new Database(dbFile);
        for (const sql of shared.usersDdl) db.exec(sql);
        db.close();
      } // else bench/baseline/server.js creates its own (mirrors the example schema)
      const start = (how = {}) =>
        startNode({
          ...how,
          name,
          node,
          args: () => [script],
          env: (port) => ({ ...process.env, ...extraEnv, PORT: String(port), HOST: '127.0.0.1', DB_PATH: dbFile }),
          cwd: dir,
          readyPath: '/readyz',
          logFile: join(dir, `${name}.stderr.log`),
        });
      await createAndSeed(start, dbFile, users, name);
      return { layout: describeSqlite(dbFile), start };
    },
  };
}

/**
 * The db.json of `size` posts in `dir`/`name`/db.json: the same text for every db.json server of
 * a size and round (made once, kept in `shared`), a copy for each.
 */
function writePostsDb({ dir, size, shared }, name) {
  shared.postsDbText ??= postsDbText(makePostsDb(size));
  const home = join(dir, name);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'db.json'), shared.postsDbText);
  return home;
}

const POSTS_LAYOUT = (size) => [`db.json: {"posts": [${size} posts], "comments": [...], "profile": {...}}`];

/**
 * `restgraph serve db.json`, as a json-server user runs it: the schema inferred from the file,
 * every resource public, json-server's query language on; its first start imports the file into
 * ./data/db.db (so the start-up time includes the import). The default anonymous quota is off
 * (RESTGRAPH_RATE_LIMIT_ANONYMOUS=off): every request of the load comes from 127.0.0.1, and
 * json-server has no quota; logging stays on (stdout, discarded), as in `restgraph`.
 */
function dbJsonRestgraph({ name = 'restgraph-dbjson', cli = restgraphCli } = {}) {
  return {
    name,
    unavailable: () => (existsSync(cli) ? null : `${cli} not found (npm run build)`),
    async prepare(ctx) {
      const home = writePostsDb(ctx, name);
      const env = { ...process.env, RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' };
      for (const key of ['DATABASE_URL', 'RESTGRAPH_SCHEMA', 'RESTGRAPH_COMPAT', 'LOG_LEVEL', 'RESTGRAPH_LOG_FORMAT', 'RESTGRAPH_ADMIN_TOKEN']) delete env[key];
      const logFile = join(ctx.dir, `${name}.stderr.log`);
      const start = (how = {}) => serveRestgraph({ name, cli, env, logFile, how, serveArgs: ['db.json'], cwd: home });
      return { layout: POSTS_LAYOUT(ctx.size), start };
    },
  };
}

/**
 * json-server (the `bin` of one installed version) on its own copy of the posts db.json, run as
 * `json-server db.json --port N --host 127.0.0.1`, its defaults otherwise. Both keep the data in
 * memory and write the whole file back on every write, as they do for their users: 0.17 (which
 * logs every request) serializes it before answering and writes it without waiting; 1.x (no
 * log, the file watched) waits for the write before answering.
 */
function jsonServer({ name, bin, version, installed }) {
  return {
    name,
    unavailable: () => (existsSync(bin) ? null : `node_modules/${installed} (json-server ${version}) not installed`),
    async prepare(ctx) {
      const home = writePostsDb(ctx, name);
      const start = (how = {}) =>
        startNode({
          ...how,
          name,
          args: (port) => [bin, 'db.json', '--port', String(port), '--host', '127.0.0.1'],
          env: () => ({ ...process.env }),
          cwd: home,
          readyPath: '/posts/1', // cheap: its list endpoint sorts the whole array first
          logFile: join(ctx.dir, `${name}.stderr.log`),
        });
      return { layout: [`json-server ${version}`, ...POSTS_LAYOUT(ctx.size)], start };
    },
  };
}

/**
 * BENCH_BEFORE=<another checkout, built>: `restgraph-before` serves that checkout's build as
 * `restgraph` is served, to compare two versions side by side in one run (restgraph/restgraph-before).
 */
const before = process.env.BENCH_BEFORE;

export const servers = [
  restgraphServer({
    name: 'restgraph',
    // The example schema: reading and writing users needs a token with users:read / users:write,
    // so every request carries an API key made with `restgraph token create`.
    schema: undefined,
    apiKeyScopes: 'users:read,users:write',
  }),
  restgraphServer({
    name: 'restgraph-ratelimited',
    // As `restgraph`, with a request quota per credential (in memory, the default on SQLite) high
    // enough never to refuse: every request is counted, on one hot counter (one API key).
    schema: undefined,
    apiKeyScopes: 'users:read,users:write',
    extraEnv: { RESTGRAPH_RATE_LIMIT: '1000000000/1m' },
  }),
  restgraphServer({
    name: 'restgraph-sync-normal',
    // As `restgraph`, with SQLite's synchronous = NORMAL (RESTGRAPH_SQLITE_SYNCHRONOUS) instead of
    // the default FULL: what the durable default costs creates (it runs the create scenario only).
    schema: undefined,
    apiKeyScopes: 'users:read,users:write',
    extraEnv: { RESTGRAPH_SQLITE_SYNCHRONOUS: 'NORMAL' },
  }),
  restgraphServer({
    name: 'restgraph-public',
    // The same, with users open to anonymous requests: the cost of authentication is the ratio.
    // The default anonymous quota (600/1m per address) is off: every request comes from 127.0.0.1,
    // and the figures stay comparable with the runs before that quota existed.
    schema: 'public',
    apiKeyScopes: undefined,
    extraEnv: { RESTGRAPH_RATE_LIMIT_ANONYMOUS: 'off' },
  }),
  ...(before === undefined
    ? []
    : [restgraphServer({ name: 'restgraph-before', schema: undefined, apiKeyScopes: 'users:read,users:write', cli: join(resolve(before), 'dist/cli/main.js') })]),
  ...variants.map((v) =>
    v.of === 'baseline'
      ? baselineServer({ name: v.name, checkout: v.checkout, node: v.node, extraEnv: v.env })
      : restgraphServer({
          name: v.name,
          schema: undefined,
          apiKeyScopes: 'users:read,users:write',
          extraEnv: v.env,
          node: v.node,
          cli: v.checkout === undefined ? undefined : join(v.checkout, 'dist/cli/main.js'),
        }),
  ),
  baselineServer({ name: 'baseline' }),
  dbJsonRestgraph(),
  jsonServer({ name: 'json-server', bin: jsonServer017Bin, version: '0.17.4', installed: 'json-server-017' }),
  jsonServer({ name: 'json-server-1x', bin: jsonServer1Bin, version: '1.0.0-beta.15', installed: 'json-server-1' }),
  restgraphServer({
    name: 'restgraph-pg',
    // As `restgraph` (example schema, API key), on a fresh PostgreSQL database (BENCH_POSTGRES_URL).
    schema: undefined,
    apiKeyScopes: 'users:read,users:write',
    postgres: true,
  }),
  {
    name: 'baseline-pg',
    unavailable: () => postgresUnavailable(),
    async prepare({ dir, users, shared }) {
      return preparePostgres('baseline-pg', users, async (database) => {
        // Same table and indexes as restgraph-pg's migration made; else
        // bench/baseline-pg/server.js creates its own (mirrors what restgraph makes).
        if (shared.pgUsersDdl) await applyDdl(database.url, shared.pgUsersDdl);
        const start = (how = {}) =>
          startNode({
            ...how,
            name: 'baseline-pg',
            args: () => [baselinePgScript],
            env: (port) => ({ ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database.url }),
            cwd: dir,
            readyPath: '/readyz',
            logFile: join(dir, 'baseline-pg.stderr.log'),
          });
        return { start };
      });
    },
  },
];
