// The server process of bench/same-process.js: restgraph apps (one per variant, each with its
// environment overrides, on its own port) and the hand-written baseline, all in this one Node
// process, so that they share its CPU, its memory layout and the machine's neighbours.
//
// Env: VARIANTS (JSON [{ "port": n, "env": { … } }]), PORT and DB_PATH (the baseline's),
// DATABASE_URL (restgraph's), plus whatever restgraph reads.
import { buildApp, optionsFromEnv } from '../dist/index.js';

for (const variant of JSON.parse(process.env.VARIANTS ?? '[]')) {
  const app = await buildApp(optionsFromEnv({ ...process.env, ...variant.env }));
  await app.listen({ port: variant.port, host: '127.0.0.1' });
}
await import('./baseline/server.js');
