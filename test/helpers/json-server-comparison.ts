import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort, killAll, startCli, waitReady, type Running } from './cli-process.js';
import { startJsonServer, type Answer, type JsonServer, type JsonServerVersion } from './json-server-oracle.js';
import { ResponseConformance } from './openapi-conformance.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';

/**
 * restgraph and json-server side by side on one db.json: `restgraph serve db.json` (the CLI, as a
 * json-server user runs it, in a folder of its own, on the suite's database) and json-server 0.17 and
 * 1.x, each on its own copy of the file. Every restgraph answer is also checked against the OpenAPI
 * document that server serves.
 */

/** 1.x writes and looks up ids as strings (its README's db.json has "id": "1"). */
export function withStringIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withStringIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, (k === 'id' || k.endsWith('Id')) && typeof v === 'number' ? String(v) : withStringIds(v)]));
}

/** A body as compared: restgraph's createdAt/updatedAt taken out; for 1.x, ids as strings. */
export function comparable(body: unknown, stringIds: boolean): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'createdAt' && k !== 'updatedAt').map(([k, v]) => [k, strip(v)]));
  };
  const stripped = strip(body);
  return stringIds ? withStringIds(stripped) : stripped;
}

/** Without the `id` members (restgraph never reuses an id, and gives a singleton the id 1; json-server 0.17 takes the largest id left plus one, and a singleton has none). */
export function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'id').map(([k, v]) => [k, withoutIds(v)]));
}

export interface SameOptions {
  /** Compare ids as strings (1.x's ids are strings; 0.17's nested POST stores the parent id as the path's string). Default: for 1.x. */
  stringIds?: boolean;
  /** Leave `id` members out of the comparison. */
  idsAside?: boolean;
}

/** The three servers of a comparison. */
export class JsonServerComparison {
  readonly #children: Running[] = [];
  readonly #oracles = new Map<JsonServerVersion, JsonServer>();
  #base = '';
  #conformance: ResponseConformance | undefined;
  #database: TestDatabase | undefined;

  /**
   * Writes `db` to `dir/restgraph/db.json` and starts `restgraph serve db.json -d <the suite's
   * database>` there, and both json-servers on copies (1.x's with string ids).
   */
  async start(db: unknown, dir: string): Promise<void> {
    const folder = join(dir, 'restgraph');
    mkdirSync(folder);
    writeFileSync(join(folder, 'db.json'), JSON.stringify(db, null, 2));
    this.#database = await createTestDatabase(dir);
    const port = await freePort();
    const running = startCli(folder, ['serve', 'db.json', '-d', this.#database.url], { PORT: String(port) }, this.#children);
    const [, v017, v1] = await Promise.all([waitReady(running, port), startJsonServer('0.17', db, dir), startJsonServer('1.x', withStringIds(db), dir)]);
    this.#oracles.set('0.17', v017);
    this.#oracles.set('1.x', v1);
    this.#base = `http://127.0.0.1:${port}`;
    const { versions } = (await (await fetch(`${this.#base}/`)).json()) as { versions: string[] };
    const documents = [{ prefix: '', document: await this.openApi() }];
    for (const version of versions) documents.push({ prefix: `/${version}`, document: (await (await fetch(`${this.#base}/${version}/openapi.json`)).json()) as OpenApiDocument });
    this.#conformance = new ResponseConformance(documents);
  }

  async stop(): Promise<void> {
    for (const oracle of this.#oracles.values()) await oracle.stop();
    await killAll(this.#children);
    await this.#database?.drop();
  }

  /** The OpenAPI document restgraph serves for the db.json. */
  async openApi(): Promise<OpenApiDocument> {
    return (await (await fetch(`${this.#base}/openapi.json`)).json()) as OpenApiDocument;
  }

  oracle(version: JsonServerVersion): JsonServer {
    const oracle = this.#oracles.get(version);
    if (oracle === undefined) throw new Error(`no json-server ${version}`);
    return oracle;
  }

  /** restgraph's answer to an anonymous request (the resources of a db.json are public, as json-server's are), checked against its OpenAPI document. */
  async restgraph(method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const headers = Object.fromEntries(response.headers.entries());
    const problems = this.#conformance?.check({ method, url: path, status: response.status, headers, body: text }) ?? [];
    if (problems.length > 0) throw new Error(`${method} ${path}: the response does not conform to the OpenAPI document:\n${problems.join('\n')}`);
    return {
      status: response.status,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
      totalCount: headers['x-total-count'],
      link: headers.link?.replaceAll(this.#base, ''),
    };
  }

  /** Sends the request to restgraph and to json-server `version`, and expects the same answer. */
  async expectSame(version: JsonServerVersion, method: string, path: string, body?: unknown, options: SameOptions = {}): Promise<Answer> {
    const [ours, theirs] = await Promise.all([this.restgraph(method, path, body), this.oracle(version).request(method, path, version === '1.x' ? withStringIds(body) : body)]);
    expectAnswersEqual(version, `${method} ${path}`, ours, theirs, options);
    return ours;
  }

  /** Sends a write to restgraph and to both json-servers, and expects each version's answer. */
  async expectSameOnBoth(method: string, path: string, body?: unknown, options: SameOptions = {}): Promise<Answer> {
    const [ours, v017, v1] = await Promise.all([
      this.restgraph(method, path, body),
      this.oracle('0.17').request(method, path, body),
      this.oracle('1.x').request(method, path, withStringIds(body)),
    ]);
    expectAnswersEqual('0.17', `${method} ${path}`, ours, v017, options);
    expectAnswersEqual('1.x', `${method} ${path}`, ours, v1, options);
    return ours;
  }

  /** {@link expectSame} for each GET of `paths`, one after the other. */
  async expectSameForEach(version: JsonServerVersion, paths: readonly string[]): Promise<void> {
    for (const path of paths) await this.expectSame(version, 'GET', path);
  }
}

function expectAnswersEqual(version: JsonServerVersion, request: string, ours: Answer, theirs: Answer, options: SameOptions): void {
  const stringIds = options.stringIds ?? version === '1.x';
  // 0.17 sends an empty Link header with a page that has no links (res.links({})); restgraph sends none.
  const link = theirs.link === '' ? undefined : theirs.link;
  const seen = (answer: unknown): unknown => (options.idsAside === true ? withoutIds(comparable(answer, stringIds)) : comparable(answer, stringIds));
  expect({ ...ours, body: seen(ours.body) }, `${request} (json-server ${version})`).toEqual({ ...theirs, link, body: seen(theirs.body) });
}
