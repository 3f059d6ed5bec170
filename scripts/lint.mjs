#!/usr/bin/env node
// `npm run lint`: ESLint over the project's own files, the ones git tracks (eslint.config.js
// says which rules apply to each and which folders are left out). Untracked files — a scratch
// script, another branch's leftovers — are not linted, so they cannot fail `npm test`; `git add`
// a new file to have it linted (CI lints a clean clone, where every file is tracked). Outside a
// git checkout (an unpacked tarball) it lints the folder, as `eslint .` does.
//
//   node scripts/lint.mjs [eslint options]     e.g. --fix, --max-warnings 0
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const eslint = fileURLToPath(new URL('../node_modules/eslint/bin/eslint.js', import.meta.url));
const LINTED = /\.(?:js|mjs|cjs|ts|tsx)$/;

/** The files git tracks that ESLint reads (and that still exist: a deletion not yet committed), or undefined outside a checkout. */
function trackedFiles() {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (listed.error !== undefined || listed.status !== 0) return undefined;
  return listed.stdout.split('\0').filter((file) => LINTED.test(file) && existsSync(`${root}/${file}`));
}

const files = trackedFiles();
if (files === undefined) process.stderr.write('not a git checkout: linting every file under the folder (eslint .)\n');
// --no-warn-ignored: a tracked file that eslint.config.js leaves out (test/vendor/) is skipped quietly, as `eslint .` skips it.
const args = [eslint, '--no-warn-ignored', ...process.argv.slice(2), ...(files ?? ['.'])];
const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (result.error !== undefined) throw result.error;
process.exit(result.status ?? 1);
