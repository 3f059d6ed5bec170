// File benchmarks (`node bench/files.js` alone, or by bench/run.js after the rule benchmarks;
// BENCH_FILES=0 skips them there): uploads and downloads of 1 MB files, requests and megabytes
// per second, restgraph against bench/baseline-files/server.js (a minimal Fastify +
// @fastify/multipart + fs server doing the same: stream to a temporary file, fsync, rename;
// stream back). Each server in turn, pinned to CPU 0, with its files in a fresh directory; the
// load (autocannon, bench/files-load.js, BENCH_FILE_CONNECTIONS connections, default 8) pinned
// to CPU 1, BENCH_FILE_DURATION seconds (default 10) after a 2 s warm-up.
//
//   upload    PUT of the 1 MB raw body: restgraph `PUT /papers/1/file` (sniffed, size-checked,
//             stored, then the row updated in a transaction and the replaced file deleted after
//             the commit); the baseline `PUT /files/1`
//   download  GET of that 1 MB file: restgraph `GET /papers/1/file` (the row read under its rules,
//             the file streamed with its headers); the baseline `GET /files/1`
//
// restgraph runs on SQLite in its default configuration (FULL durability: each file fsync'ed,
// then its directory). The baseline runs twice: with the same fsyncs (`baseline-files`, the
// like-for-like reference the ratio uses) and without (`baseline-files-nosync`, to show what the
// fsyncs cost); restgraph also with RESTGRAPH_SQLITE_SYNCHRONOUS=NORMAL (`restgraph-sync-normal`:
// neither the file nor the commit fsync'ed), compared with the baseline without fsync. Target:
// restgraph >= 0.8x baseline-files in both.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canPin, startProcess } from './lib/proc.js';
import { startNode, serveRestgraph } from './servers.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const MB = 1024 * 1024;
const ADMIN_TOKEN = 'bench-files-admin-token-0123456789';
const SCHEMA = `resources:
  papers:
    fields:
      name: { type: string }
      file: { type: file, maxSize: 16MB }
`;

/** The file benchmarks' settings from the environment. */
export function fileConfig(env) {
  if (!['0', '1', undefined].includes(env.BENCH_FILES)) throw new Error('BENCH_FILES must be 0 or 1');
  return { enabled: env.BENCH_FILES !== '0', duration: Number(env.BENCH_FILE_DURATION ?? 10), connections: Number(env.BENCH_FILE_CONNECTIONS ?? 8) };
}

/** Seconds the file benchmarks take at most. */
export function filePlannedSeconds(config) {
  return config.enabled ? 4 * 2 * (config.duration + 2 + 20) : 0;
}

function load(spec) {
  const child = startProcess(process.execPath, [join(benchDir, 'files-load.js'), JSON.stringify(spec)], { cpu: 1, stdout: 'pipe' });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
  return child.exited.then(({ code }) => {
    if (code !== 0) throw new Error(`the load worker exited ${code}`);
    return JSON.parse(out.trim().split('\n').pop());
  });
}

async function measure(url, method, headers, config) {
  const spec = { url, method, headers, bodyBytes: method === 'GET' ? 0 : MB, contentType: 'application/octet-stream', connections: config.connections };
  await load({ ...spec, duration: 2 });
  const r = await load({ ...spec, duration: config.duration });
  return { ...r, mbPerSecond: (method === 'GET' ? r.bytes : r.requests * MB) / MB };
}

async function serverRuns(name, start, paths, headers, config) {
  const dir = mkdtempSync(join(tmpdir(), `rg-bench-files-${name}-`));
  const server = await start(dir);
  try {
    await fetch(server.url + paths.create.path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: paths.create.body }).catch(() => undefined);
    const upload = await measure(server.url + paths.file, 'PUT', headers, config);
    const download = await measure(server.url + paths.file, 'GET', headers, config);
    return { upload, download };
  } finally {
    await server.stop(15_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the file benchmarks; resolves to their results. */
export async function runFiles(config) {
  console.log(`\n=== files (1 MB uploads and downloads; ${config.connections} connections, ${config.duration} s; ${canPin ? 'server on CPU 0, load on CPU 1' : 'NOT pinned: taskset or a second CPU missing'}) ===`);
  const baseline = (fsync) => (dir) =>
    startNode({ name: 'baseline-files', args: () => [join(benchDir, 'baseline-files/server.js')], env: (port) => ({ ...process.env, PORT: String(port), FILES_DIR: join(dir, 'files'), BASELINE_FSYNC: fsync ? '1' : '0' }), cwd: dir, readyPath: '/readyz' });
  const restgraph = (extraEnv = {}) => (dir) => {
    writeFileSync(join(dir, 'schema.yaml'), SCHEMA);
    return serveRestgraph({ name: 'restgraph', cwd: dir, env: { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'files.db')}`, RESTGRAPH_SCHEMA: join(dir, 'schema.yaml'), RESTGRAPH_ADMIN_TOKEN: ADMIN_TOKEN, RESTGRAPH_FILES_DIR: join(dir, 'files'), ...extraEnv } });
  };
  const papers = { create: { path: '/papers', body: '{"name":"bench"}' }, file: '/papers/1/file' };
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const results = {
    restgraph: await serverRuns('restgraph', restgraph(), papers, admin, config),
    'restgraph-sync-normal': await serverRuns('restgraph-normal', restgraph({ RESTGRAPH_SQLITE_SYNCHRONOUS: 'NORMAL' }), papers, admin, config),
    'baseline-files': await serverRuns('baseline', baseline(true), { create: { path: '/readyz', body: '{}' }, file: '/files/1' }, {}, config),
    'baseline-files-nosync': await serverRuns('baseline-nosync', baseline(false), { create: { path: '/readyz', body: '{}' }, file: '/files/1' }, {}, config),
  };
  const rows = [];
  for (const [server, r] of Object.entries(results)) {
    for (const kind of ['upload', 'download']) {
      const x = r[kind];
      const ratio = results['baseline-files'][kind].requests > 0 ? x.requests / results['baseline-files'][kind].requests : NaN;
      rows.push(`  ${server.padEnd(22)} ${kind.padEnd(9)} ${x.requests.toFixed(1).padStart(8)} req/s ${x.mbPerSecond.toFixed(1).padStart(8)} MB/s  ${ratio.toFixed(2)}x baseline-files${x.non2xx + x.errors > 0 ? `  ! ${x.non2xx} non-2xx, ${x.errors} errors` : ''}`);
    }
  }
  console.log(rows.join('\n'));
  for (const kind of ['upload', 'download']) {
    const ratio = results.restgraph[kind].requests / results['baseline-files'][kind].requests;
    console.log(`  restgraph/baseline-files ${kind}: ${ratio.toFixed(2)} (target >= 0.8) ${ratio >= 0.8 ? 'PASS' : 'BELOW'}`);
    const unsynced = results['restgraph-sync-normal'][kind].requests / results['baseline-files-nosync'][kind].requests;
    console.log(`  restgraph-sync-normal/baseline-files-nosync ${kind}: ${unsynced.toFixed(2)} (neither fsyncs)`);
  }
  return { generatedAt: new Date().toISOString(), connections: config.connections, durationSeconds: config.duration, results };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runFiles(fileConfig(process.env));
