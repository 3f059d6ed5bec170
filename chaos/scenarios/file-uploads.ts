import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Running } from '../../test/helpers/cli-process.js';
import { ADMIN_HEADERS, FILE_SCHEMA, chunksOf, hashedDownload, rowFiles, storedFiles, streamUpload, temporaryFiles } from '../lib/file-uploads.js';
import { exchange } from '../lib/http-exchange.js';
import { postgresProblem, scratchDatabase, type ScratchDatabase } from '../lib/scratch-database.js';
import { killAll, scratchDir, serveBuilt, type ServedApp } from '../lib/served-app.js';
import type { ChaosContext, ScenarioResult } from '../scenario.js';

/**
 * File fields under load and faults (docs/files.md), against the built server as a child process:
 * a 1 GB upload streamed over a real socket with the server's memory bounded, and a kill -9 in the
 * middle of 100 concurrent uploads leaving no row pointing at a missing file and the sweep
 * removing every orphan. On SQLite and on PostgreSQL.
 */

const MiB = 1024 * 1024;
/** The upload's size, and how much the server's resident memory may grow meanwhile. */
const BIG_UPLOAD_BYTES = 1024 * MiB;
const MAX_RSS_GROWTH_BYTES = 50 * MiB;

/**
 * A 1 GB upload (PUT, chunked, generated as it is sent) then its download, hashed as both stream:
 * the SHA-256s match, the row says 1 GB, and the server's resident set (VmRSS, sampled every 20 ms
 * from /proc) grows less than 50 MB above what it was just before the upload.
 */
export default async function bigUpload(context: ChaosContext): Promise<ScenarioResult[]> {
  const results = [await bigUploadOn('sqlite', context)];
  if (!context.short) {
    const unreachable = await postgresProblem();
    results.push(unreachable === undefined ? await bigUploadOn('postgres', context) : { name: '1 GB upload (postgres)', passed: false, detail: unreachable });
  }
  return results;
}

async function bigUploadOn(dialect: 'sqlite' | 'postgres', context: ChaosContext): Promise<ScenarioResult> {
  const name = `1 GB upload and download, server memory bounded (${dialect})`;
  if (process.platform !== 'linux') return { name, passed: true, detail: 'skipped: the resident set is read from /proc (Linux only)' };
  const dir = scratchDir('restgraph-chaos-bigfile-');
  const children: Running[] = [];
  const db = await scratchDatabase(dialect, dir.path);
  const problems: string[] = [];
  let figures = '';
  try {
    writeFileSync(join(dir.path, 'schema.yaml'), FILE_SCHEMA);
    const app = await serveBuilt(dir.path, { DATABASE_URL: db.url, RESTGRAPH_SCHEMA: 'schema.yaml', RESTGRAPH_FILES_DIR: join(dir.path, 'files') }, children);
    const pid = app.process.child.pid ?? 0;
    const id = await createDoc(app, 'big');
    // Warm-up: a small upload and download, so the modules they load count in the baseline.
    const warm = await streamUpload(app.base, `/papers/${id}/file`, chunksOf(4, 64 * 1024, createHash('sha256'), () => randomBytes(64 * 1024)));
    if (warm.status !== 200) throw new Error(`the warm-up upload answered ${warm.status}: ${warm.body.slice(0, 300)}`);
    await hashedDownload(app.base, `/papers/${id}/file`);
    const baseline = rssBytes(pid);
    const sampler = sampleRss(pid);

    const pattern = randomBytes(MiB);
    const sent = createHash('sha256');
    let started = performance.now();
    const upload = await streamUpload(app.base, `/papers/${id}/file`, chunksOf(BIG_UPLOAD_BYTES / MiB, MiB, sent, (n) => {
      const chunk = Buffer.from(pattern);
      chunk.writeUInt32BE(n, 0); // every MiB differs
      return chunk;
    }));
    const uploadSeconds = (performance.now() - started) / 1000;
    const uploadPeak = sampler.peak();
    if (upload.status !== 200) problems.push(`the upload answered ${upload.status}: ${upload.body.slice(0, 300)}`);
    else if ((JSON.parse(upload.body) as { file: { size: number } }).file.size !== BIG_UPLOAD_BYTES) problems.push(`the row says ${upload.body.slice(0, 300)}`);

    started = performance.now();
    const download = await hashedDownload(app.base, `/papers/${id}/file`);
    const downloadSeconds = (performance.now() - started) / 1000;
    const peak = sampler.stop();
    const sentHash = sent.digest('hex');
    if (download.status !== 200) problems.push(`the download answered ${download.status}`);
    if (download.bytes !== BIG_UPLOAD_BYTES) problems.push(`the download had ${download.bytes} bytes, not ${BIG_UPLOAD_BYTES}`);
    if (download.sha256 !== sentHash) problems.push(`the download's SHA-256 ${download.sha256} is not the upload's ${sentHash}`);
    const growth = peak - baseline;
    if (growth >= MAX_RSS_GROWTH_BYTES) problems.push(`the server's resident set grew by ${mb(growth)} (baseline ${mb(baseline)}, peak ${mb(peak)}; upload peak ${mb(uploadPeak)}): the bound is ${mb(MAX_RSS_GROWTH_BYTES)}`);
    figures = `1 GiB up in ${uploadSeconds.toFixed(1)} s, down in ${downloadSeconds.toFixed(1)} s, SHA-256 equal; server RSS baseline ${mb(baseline)}, peak ${mb(peak)} (upload ${mb(uploadPeak)}): +${mb(growth)} (bound ${mb(MAX_RSS_GROWTH_BYTES)})`;
    context.log(`${dialect}: ${figures}`);
    await app.stop();
  } catch (error) {
    problems.push(`the scenario failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await killAll(children);
    await db.drop();
    dir.cleanup();
  }
  return { name, passed: problems.length === 0, detail: problems.length === 0 ? figures : problems.join('\n') };
}

/** A process's resident set (VmRSS), in bytes. */
function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Samples a process's resident set every 20 ms; `peak()` so far, `stop()` ends it and gives the peak. */
function sampleRss(pid: number): { peak: () => number; stop: () => number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      // the process is gone: the scenario fails on its own
    }
  }, 20);
  return {
    peak: () => peak,
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

function mb(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MB`;
}

async function createDoc(app: ServedApp, name: string): Promise<number> {
  const response = await exchange(app.base, { method: 'POST', path: '/papers', headers: { ...ADMIN_HEADERS, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  if (response.status !== 201) throw new Error(`creating a doc answered ${response.status}: ${response.body.slice(0, 300)}`);
  return Number((JSON.parse(response.body) as { id: unknown }).id);
}

/** Uploads at once, one per row; half the rows already have a file, which the upload replaces. */
const UPLOADS = 100;
const CHUNK = 32 * 1024;
const CHUNKS = 24;

/**
 * kill -9 in the middle of 100 concurrent uploads (each 768 KB, sent in 32 KB chunks a few ms
 * apart, begun 15 ms apart; half replace a file), then a restart on the same database and directory: no row points at
 * a missing file (every row's file is on disk with its size, and downloads whole with the hash of
 * what was sent for it), every acknowledged upload is its row's file, and the sweep at start-up
 * leaves exactly the referenced files: the orphans the kill left (files stored but not referenced,
 * replaced files not yet deleted; their times set back past the sweep's hour) and one put there
 * by hand are gone, and tmp/ is empty.
 */
export async function killDuringUploads(context: ChaosContext): Promise<ScenarioResult[]> {
  const results = [await killDuringUploadsOn('sqlite', context)];
  const unreachable = await postgresProblem();
  results.push(unreachable === undefined ? await killDuringUploadsOn('postgres', context) : { name: 'kill -9 during 100 uploads (postgres)', passed: false, detail: unreachable });
  return results;
}

async function killDuringUploadsOn(dialect: 'sqlite' | 'postgres', context: ChaosContext): Promise<ScenarioResult> {
  const name = `kill -9 during ${UPLOADS} concurrent uploads, then the sweep (${dialect})`;
  const loops = context.short ? 1 : 3;
  const delays = fc.sample(fc.integer({ min: 700, max: 1800 }), { seed: context.seed + (dialect === 'sqlite' ? 0 : 1), numRuns: loops });
  const dir = scratchDir('restgraph-chaos-killfiles-');
  const children: Running[] = [];
  const db = await scratchDatabase(dialect, dir.path);
  const files = join(dir.path, 'files');
  const env = { DATABASE_URL: db.url, RESTGRAPH_SCHEMA: 'schema.yaml', RESTGRAPH_FILES_DIR: files };
  const problems: string[] = [];
  const lines: string[] = [];
  try {
    writeFileSync(join(dir.path, 'schema.yaml'), FILE_SCHEMA);
    let app = await serveBuilt(dir.path, env, children);
    /** What each row's file may be: the SHA-256 of each upload sent to it. */
    const sentTo = new Map<number, Set<string>>();
    const ids: number[] = [];
    for (let n = 0; n < UPLOADS; n++) ids.push(await createDoc(app, `doc-${n}`));
    for (const id of ids.slice(0, UPLOADS / 2)) {
      const hash = createHash('sha256');
      const answer = await streamUpload(app.base, `/papers/${id}/file`, chunksOf(2, CHUNK, hash, () => randomBytes(CHUNK)));
      if (answer.status !== 200) throw new Error(`a first upload answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      sentTo.set(id, new Set([hash.digest('hex')]));
    }
    for (let loop = 0; loop < loops; loop++) {
      const acknowledged = new Map<number, string>();
      let unanswered = 0;
      const uploads = ids.map(async (id, n) => {
        // Started over the first second and a half: at the kill, some are done, some under way, some not begun.
        await sleep(n * 15);
        const hash = createHash('sha256');
        const pause = (): Promise<void> => new Promise((r) => setTimeout(r, 2 + Math.floor(Math.random() * 20)));
        const body = chunksOf(CHUNKS, CHUNK, hash, () => randomBytes(CHUNK), pause);
        try {
          const answer = await streamUpload(app.base, `/papers/${id}/file`, body);
          if (answer.status !== 200) throw new Error(`an upload answered ${answer.status}: ${answer.body.slice(0, 300)}`);
          acknowledged.set(id, (JSON.parse(answer.body) as { file: { etag: string } }).file.etag.replace(/"/g, ''));
        } catch (error) {
          if (error instanceof Error && error.message.startsWith('an upload answered')) throw error;
          unanswered++;
        } finally {
          // Whatever was sent may be what the row holds, when the kill came after its commit.
          const sent = sentTo.get(id) ?? new Set<string>();
          sent.add(hash.digest('hex'));
          sentTo.set(id, sent);
        }
      });
      await sleep(delays[loop] ?? 400);
      await app.kill();
      await Promise.all(uploads);
      if (unanswered === 0) problems.push(`loop ${loop + 1}: every upload had finished when the kill came (${delays[loop] ?? 0} ms): nothing was interrupted`);

      // On disk after the kill: what no row references is an orphan; its time set back past the sweep's hour.
      const left = storedFiles(files);
      const referenced = new Map((await rowFiles(db)).map((f) => [f.key, f]));
      const orphans = [...left.keys()].filter((key) => !referenced.has(key));
      const temporary = temporaryFiles(files).length;
      const longAgo = new Date(Date.now() - 2 * 3600 * 1000);
      for (const file of left.values()) utimesSync(file.path, longAgo, longAgo);
      // And one put there by hand, as a crash of another kind would leave it.
      const planted = randomBytes(16).toString('base64url');
      mkdirSync(join(files, planted.slice(0, 2)), { recursive: true });
      writeFileSync(join(files, planted.slice(0, 2), planted), 'orphan');
      utimesSync(join(files, planted.slice(0, 2), planted), longAgo, longAgo);
      writeFileSync(join(files, 'tmp', `${planted}.000000000000`), 'half an upload');

      app = await serveBuilt(dir.path, env, children);
      problems.push(...(await consistencyProblems(app, db, files, sentTo, acknowledged)).map((p) => `loop ${loop + 1}: ${p}`));
      lines.push(`loop ${loop + 1}: killed after ${delays[loop] ?? 0} ms: ${acknowledged.size} uploads acknowledged, ${unanswered} unanswered; left ${orphans.length} orphan files and ${temporary} in tmp/ (+1 of each put by hand), all removed; ${referenced.size} rows' files whole`);
      context.log(`${dialect}: ${lines[lines.length - 1] ?? ''}`);
      if (problems.length > 0) break;
    }
    await app.stop();
  } catch (error) {
    problems.push(`the scenario failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await killAll(children);
    await db.drop();
    dir.cleanup();
  }
  return { name, passed: problems.length === 0, detail: problems.length === 0 ? lines.join('\n') : problems.slice(0, 20).join('\n') };
}

/**
 * After a restart: every row's file is on disk with its size and downloads with the hash of an
 * upload sent to it; each acknowledged upload is its row's file; once the start-up sweep has run
 * (waited for, up to 15 s), the disk holds exactly the referenced files and tmp/ nothing.
 */
async function consistencyProblems(app: ServedApp, db: ScratchDatabase, files: string, sentTo: ReadonlyMap<number, ReadonlySet<string>>, acknowledged: ReadonlyMap<number, string>): Promise<string[]> {
  const problems: string[] = [];
  const rows = await rowFiles(db);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const [id, key] of acknowledged) if (byId.get(id)?.key !== key) problems.push(`row ${id}: its acknowledged upload ${key} is not its file (${byId.get(id)?.key ?? 'none'})`);
  const referenced = new Set(rows.map((r) => r.key));
  let onDisk = storedFiles(files);
  for (let waited = 0; waited < 15_000 && ([...onDisk.keys()].some((key) => !referenced.has(key)) || temporaryFiles(files).length > 0); waited += 100) {
    await sleep(100);
    onDisk = storedFiles(files);
  }
  for (const row of rows) {
    const stored = onDisk.get(row.key);
    if (stored === undefined) problems.push(`row ${row.id} points at ${row.key}, which is not in storage`);
    else if (stored.size !== row.size) problems.push(`row ${row.id}: ${row.key} has ${stored.size} bytes, the row says ${row.size}`);
  }
  const orphans = [...onDisk.keys()].filter((key) => !referenced.has(key));
  if (orphans.length > 0) problems.push(`the sweep left ${orphans.length} orphan files (${orphans.slice(0, 5).join(', ')})`);
  const temporary = temporaryFiles(files);
  if (temporary.length > 0) problems.push(`tmp/ still holds ${temporary.length} files`);
  for (const row of rows) {
    const download = await hashedDownload(app.base, `/papers/${row.id}/file`);
    if (download.status !== 200 || !(sentTo.get(row.id)?.has(download.sha256) ?? false)) problems.push(`row ${row.id}: the download answered ${download.status} with ${download.bytes} bytes that are none of the uploads sent to it`);
  }
  return problems;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
