#!/usr/bin/env node
// `npm start [-- serve options]`: serve the API from dist/, rebuilding dist/ first only when a
// source changed since the last build (and the admin console, dist/console/, when console/ did). `npm install` builds once (the `prepare` script); a restart
// with nothing changed then costs a walk over the sources' modification times instead of a
// TypeScript compile. `tsc -b` keeps the final say: it rebuilds incrementally, and also when an
// output is missing.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildConsoleIfStale, mtime, newestUnder } from './console-build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const buildInfo = `${root}dist/.tsbuildinfo`;

/** The newest modification time of the build's inputs: src/ and the TypeScript configuration. */
function newestInput() {
  return Math.max(mtime(`${root}tsconfig.json`) ?? 0, mtime(`${root}tsconfig.build.json`) ?? 0, newestUnder('src'));
}

const built = mtime(buildInfo);
if (built === undefined || mtime(`${root}dist/cli/main.js`) === undefined || newestInput() > built) {
  process.stderr.write('restgraph: sources changed since the last build; compiling (tsc -b)\n');
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// The admin console at /admin, likewise (vite, only when console/ changed).
const consoleStatus = buildConsoleIfStale();
if (consoleStatus !== 0) process.exit(consoleStatus);

// Run the CLI in this process (no second Node start-up), as `restgraph serve <arguments>`.
process.argv.splice(2, 0, 'serve');
await import('../dist/cli/main.js');
