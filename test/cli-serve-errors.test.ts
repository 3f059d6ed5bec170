import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, freePort, itWithFolder } from './helpers/cli-process.js';
import { run, serve, writeSchema } from './helpers/cli-serve.js';

/**
 * The `restgraph` CLI as operators run it: a child process of dist/cli/main.js, on real temp
 * SQLite files and real sockets on 127.0.0.1.
 * `serve` refusing to start: a bad schema or setting, a port in use.
 * (The other cli-*.test.ts files: cli-help, cli-serve, cli-serve-signals, cli-migrate.)
 */

// Each test has its own folder (and processes): the tests run concurrently, most of a test being a
// child process starting or stopping.
const it = itWithFolder('restgraph-cli-');

describe.concurrent('serve', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('a bad schema file exits 1 with file, path, line and reason on stderr', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'resources:\n  users:\n    fields:\n      name: { type: text }\n', 'broken.yaml');
    const result = await run(dir, ['serve', schema], { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(await freePort()) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`restgraph: Invalid schema ${schema}:`);
    expect(result.stderr).toMatch(new RegExp(`${schema.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4:\\d+ at resources\\.users\\.fields\\.name\\.type: must be one of "string"`));
    expect(result.stderr).toContain('[RG_SCHEMA_INVALID]');
    expect(result.stdout).not.toContain('listening');
  });

  it('a missing schema file exits 1 naming it', async ({ folder: dir }) => {
    const missing = join(dir.path, 'nope.yaml');
    const result = await run(dir, ['serve', missing], { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(missing);
    expect(result.stderr).toContain('cannot read the file: ENOENT');
  });

  const badEnv: [string, string, string][] = [
    ['PORT', 'abc', 'must be an integer from 0 to 65535, not "abc"'],
    ['PORT', '70000', 'must be an integer from 0 to 65535'],
    ['LOG_LEVEL', 'loud', 'must be one of fatal, error, warn, info, debug, trace, silent'],
    ['RESTGRAPH_LOG_FORMAT', 'yaml', 'must be one of json, pretty'],
    ['RESTGRAPH_CORS_ORIGINS', 'nonsense', '"nonsense" is not an origin like https://app.example.com'],
    ['RESTGRAPH_BODY_LIMIT', '-5', 'must be an integer'],
    ['RESTGRAPH_TRUST_PROXY', 'maybe', 'must be true or false'],
    ['DATABASE_URL', 'mysql://db/app', 'unsupported database URL scheme'],
    ['DATABASE_URL', 'postgres://postgres@127.0.0.1:1/app', 'cannot reach the database postgres://127.0.0.1:1/app: connect ECONNREFUSED 127.0.0.1:1'],
    ['DATABASE_URL', 'postgres://127.0.0.1:5432', 'the postgres:// URL names no database'],
    ['RESTGRAPH_RATE_LIMIT', '100 per minute', 'must be "<count>/<window>", like 100/1m'],
    ['RESTGRAPH_GRAPHQL_RATE_LIMIT', '0/1m', 'must be "<count>/<window>"'],
    ['RESTGRAPH_RATE_LIMIT_STORE', 'disk', 'must be memory, database or redis, not "disk"'],
    ['REDIS_URL', 'http://127.0.0.1:6379', 'must be a redis:// or rediss:// URL'],
  ];
  for (const [name, value, reason] of badEnv) {
    it(`${name}=${value} exits 1 naming the variable`, async ({ folder: dir }) => {
      const env: Record<string, string> = { DATABASE_URL: `sqlite:${join(dir.path, 'x.db')}`, PORT: String(await freePort()) };
      env[name] = value;
      const result = await run(dir, ['serve'], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`restgraph: Invalid configuration ${name}: ${reason}`);
      expect(result.stderr).toContain('[RG_CONFIG_INVALID]');
      expect(result.stdout).not.toContain('listening');
    });
  }

  it('a port already in use exits 1 with one line naming the address and the fix, before creating the database', async ({ folder: dir }) => {
    const first = await serve(dir, []);
    const other = join(dir.path, 'other.db');
    const result = await run(dir, ['serve'], { DATABASE_URL: `sqlite:${other}`, PORT: String(first.port) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `restgraph: Cannot listen on 127.0.0.1:${first.port}: another program uses port ${first.port}. Choose another port with -p (or PORT), e.g. npx restgraph serve -p ${first.port + 1} [RG_PORT_UNAVAILABLE]\n`,
    );
    expect(existsSync(other)).toBe(false);
  });

  it('a mapped schema served without its database says to name it with -d, and creates nothing', async ({ folder: dir }) => {
    const schema = writeSchema(dir, 'database: { existing: true }\nresources:\n  country:\n    key: [code]\n    fields:\n      code: { type: string, required: true }\n', 'films.yaml');
    const result = await run(dir, ['serve', schema], { PORT: String(await freePort()) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^restgraph: Invalid configuration -d: there is no SQLite database at \S+films\.db: a mapped schema serves the database it maps; name it with -d <database-url> \(or DATABASE_URL\), the one init --from read \[RG_CONFIG_INVALID\]\n$/);
    expect(existsSync(join(dir.path, 'data'))).toBe(false);
  });

  it('init --from a file that does not exist says so', async ({ folder: dir }) => {
    const result = await run(dir, ['init', '--from', 'nosuch.db', '-o', 'x.yaml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nosuch.db: there is no such file');
    expect(existsSync(join(dir.path, 'x.yaml'))).toBe(false);
  });

  const credentialMistakes: [Record<string, string>, string][] = [
    [{ RESTGRAPH_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' }, 'RESTGRAPH_JWT_AUDIENCE: must be set with RESTGRAPH_JWKS_URL or RESTGRAPH_JWT_PUBLIC_KEY'],
    [{ RESTGRAPH_ADMIN_TOKEN: 'too-short' }, 'RESTGRAPH_ADMIN_TOKEN: must be at least 16 characters long'],
  ];
  for (const [settings, reason] of credentialMistakes) {
    it(`a credential setting's mistake (${Object.keys(settings).join(', ')}) is told before the port is tried, with nothing created`, async ({ folder: dir }) => {
      const first = await serve(dir, []);
      const other = join(dir.path, 'other.db');
      const result = await run(dir, ['serve'], { ...settings, DATABASE_URL: `sqlite:${other}`, PORT: String(first.port) });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`restgraph: Invalid configuration ${reason}`);
      expect(result.stderr).not.toContain('RG_PORT_UNAVAILABLE');
      expect(existsSync(other)).toBe(false);
    });
  }
});
