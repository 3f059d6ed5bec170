// Builds the admin console (console/ → dist/console/, vite) when its sources changed since the
// last build, for `npm start` and the test suite's global set-up (`npm run build` always builds it).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A file's or folder's modification time, or undefined when it does not exist. */
export function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The newest modification time under `folder` (relative to the repository), the folder itself
 * included: a directory's time changes when a file in it is added, renamed or deleted.
 */
export function newestUnder(folder) {
  let newest = mtime(`${root}${folder}`) ?? 0;
  for (const entry of readdirSync(`${root}${folder}`, { recursive: true, withFileTypes: true })) {
    newest = Math.max(newest, statSync(`${entry.parentPath ?? entry.path}/${entry.name}`).mtimeMs);
  }
  return newest;
}

/** The newest modification time among console/'s files (and preact's, which the bundle holds). */
function newestInput() {
  return Math.max(mtime(`${root}node_modules/preact/package.json`) ?? 0, newestUnder('console'));
}

/** Whether dist/console/ is missing or older than console/. */
export function consoleBuildStale() {
  const built = mtime(`${root}dist/console/index.html`);
  return built === undefined || newestInput() > built;
}

/** Runs `vite build` for the console if it is stale; returns the exit status (0 when nothing was to do). */
export function buildConsoleIfStale(log = (line) => process.stderr.write(`${line}\n`)) {
  if (!consoleBuildStale()) return 0;
  log('restgraph: the admin console changed since the last build; building it (vite build)');
  const vite = fileURLToPath(new URL('../node_modules/vite/bin/vite.js', import.meta.url));
  // A production build whatever NODE_ENV the caller has (vitest sets "test").
  const env = { ...process.env, NODE_ENV: 'production' };
  return spawnSync(process.execPath, [vite, 'build', '--config', 'console/vite.config.ts'], { cwd: root, env, stdio: 'inherit', timeout: 180_000 }).status ?? 1;
}
