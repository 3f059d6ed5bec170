// The file benchmarks' reference (bench/files.js): a minimal Fastify + @fastify/multipart + fs
// server doing what restgraph's file routes do, and nothing else (no database, no access rules,
// no sniffing): PUT /files/:id takes the raw bytes, POST /files/:id a multipart form's first file,
// each streamed to a temporary file, fsync'ed when BASELINE_FSYNC=1 (restgraph's default, with
// SQLite's FULL durability), renamed into place; GET /files/:id streams it back with its
// Content-Type and Content-Length. PORT, FILES_DIR.
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { open, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Fastify from 'fastify';
import multipart from '@fastify/multipart';

const dir = process.env.FILES_DIR ?? './files';
const fsync = process.env.BASELINE_FSYNC === '1';
mkdirSync(join(dir, 'tmp'), { recursive: true });
const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
await app.register(multipart, { limits: { fileSize: 64 * 1024 * 1024, files: 1 } });
app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
let n = 0;

async function store(id, stream) {
  const temporary = join(dir, 'tmp', `${id}.${n++}`);
  await pipeline(stream, createWriteStream(temporary));
  if (fsync) {
    const handle = await open(temporary, 'r+');
    await handle.sync();
    await handle.close();
  }
  await rename(temporary, join(dir, id));
  if (fsync) {
    const handle = await open(dir, 'r');
    await handle.sync();
    await handle.close();
  }
  const { size } = await stat(join(dir, id));
  return { id, size };
}

const safeId = (id) => (/^[0-9]{1,12}$/.test(id) ? id : undefined);
app.put('/files/:id', async (request, reply) => {
  const id = safeId(request.params.id);
  if (id === undefined) return reply.code(404).send();
  return store(id, request.body);
});
app.post('/files/:id', async (request, reply) => {
  const id = safeId(request.params.id);
  const file = await request.file();
  if (id === undefined || file === undefined) return reply.code(400).send();
  return store(id, file.file);
});
app.get('/files/:id', async (request, reply) => {
  const id = safeId(request.params.id);
  if (id === undefined) return reply.code(404).send();
  const path = join(dir, id);
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return reply.code(404).send();
  return reply.header('content-type', 'application/octet-stream').header('content-length', info.size).send(createReadStream(path));
});
app.get('/readyz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
