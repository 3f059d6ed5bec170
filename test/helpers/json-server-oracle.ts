import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, killAll, startProcess, type Running } from './cli-process.js';

/**
 * The real json-server, as the oracle of restgraph's `--compat json-server`: 0.17.4 (the devDependency
 * `json-server-017`) and 1.x (`json-server-1`, 1.0.0-beta.15 from test/vendor: its README says
 * why), each started as a child process on a db.json of its own in a temp folder.
 */
export type JsonServerVersion = '0.17' | '1.x';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const BIN: Record<JsonServerVersion, string> = {
  '0.17': join(ROOT, 'node_modules', 'json-server-017', 'lib', 'cli', 'bin.js'),
  '1.x': join(ROOT, 'node_modules', 'json-server-1', 'lib', 'bin.js'),
};

/** An answer, as the comparisons read it. */
export interface Answer {
  status: number;
  body: unknown;
  totalCount: string | undefined;
  /** The Link header with the server's origin taken out (json-server's links are absolute). */
  link: string | undefined;
}

export interface JsonServer {
  version: JsonServerVersion;
  request(method: string, path: string, body?: unknown): Promise<Answer>;
  stop(): Promise<void>;
}

/** Starts json-server `version` on `db` (written to `dir/<version>.json`) and waits until it answers. */
export async function startJsonServer(version: JsonServerVersion, db: unknown, dir: string): Promise<JsonServer> {
  const file = join(dir, `db-${version}.json`);
  writeFileSync(file, JSON.stringify(db, null, 2));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const children: Running[] = [];
  const args = version === '0.17' ? [file, '--port', String(port), '--host', '127.0.0.1', '--quiet'] : [file, '--port', String(port), '--host', '127.0.0.1'];
  const running = startProcess(process.execPath, [BIN[version], ...args], dir, {}, children);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(`${origin}/db`);
      await response.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline || running.child.exitCode !== null) throw new Error(`json-server ${version} did not start:\n${running.stderr()}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return {
    version,
    async request(method, path, body) {
      const response = await fetch(`${origin}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      // 1.x writes db.json after a write and also watches the file, reloading it on each change
      // event: an event of the previous write arriving after this one can bring its state back for
      // a moment (seen once in ~30 runs: a PATCH then read back as the PUT before it). Its writes
      // are given time to settle before the next request, so the comparison reads what 1.x holds.
      if (version === '1.x' && method !== 'GET') await new Promise((done) => setTimeout(done, 250));
      return {
        status: response.status,
        body: text === '' ? undefined : response.headers.get('content-type')?.includes('json') === true ? (JSON.parse(text) as unknown) : text,
        totalCount: response.headers.get('x-total-count') ?? undefined,
        link: response.headers.get('link')?.replaceAll(origin, '') ?? undefined,
      };
    },
    stop: () => killAll(children),
  };
}
