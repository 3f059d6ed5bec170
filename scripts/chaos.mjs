#!/usr/bin/env node
// `npm run chaos`: the fault-and-abuse suite of chaos/ (README, Development). Its scenarios are
// TypeScript, run without a compile step through Vite's module loader (the transformer the test
// runner uses); they drive the built server (dist/), which `npm run chaos` builds first.
import { createServer } from 'vite';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// A loader only: no HTTP server, no file watching, no HMR.
const vite = await createServer({ root, configFile: false, logLevel: 'error', appType: 'custom', server: { middlewareMode: true, hmr: false, ws: false, watch: null } });
try {
  const { runChaos } = await vite.ssrLoadModule('/chaos/run.ts');
  process.exitCode = await runChaos(process.argv.slice(2));
} finally {
  await vite.close();
}
