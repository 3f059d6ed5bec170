// The test files whose outcome cannot depend on the database the suite runs on, so the PostgreSQL
// pass leaves them to the SQLite pass instead of running them a second time, identically
// (scripts/test-postgres.mjs, vitest.config.ts).
//
// A test learns the suite's database from RESTGRAPH_TEST_DB alone (test/helpers/test-database.ts
// reads it; nothing in src/ does, and the CLI's child processes do not even see it:
// test/helpers/cli-process.ts leaves every RESTGRAPH_* variable out of their environment). A file is database-independent when no module it loads
// mentions RESTGRAPH_TEST_DB: neither the file itself nor any file its relative imports reach,
// static or dynamic, in test/, src/, scripts/ or anywhere else in the repository. Packages
// (bare specifiers) are not followed: none reads the variable. A file that starts using the
// suite's database (importing test-database.ts, directly or through a helper) is back in both
// passes by itself.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const MARK = 'RESTGRAPH_TEST_DB';
/** `from '…'`, `import '…'`, `import('…')` and `export … from '…'` with a relative specifier. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The file a relative specifier names, as TypeScript under NodeNext resolves it (`./x.js` may be x.ts). */
function resolveSpecifier(from, specifier) {
  const path = resolve(dirname(from), specifier);
  const candidates = [path, path.replace(/\.js$/, '.ts'), path.replace(/\.mjs$/, '.mts'), path.replace(/\.cjs$/, '.cts'), `${path}.ts`, join(path, 'index.ts')];
  return candidates.find((candidate) => existsSync(candidate) && !candidate.endsWith('/') && /\.[cm]?[jt]s$/.test(candidate));
}

/**
 * Whether any module `file` loads mentions RESTGRAPH_TEST_DB, by a depth-first walk of its
 * imports (`visiting`: the files seen in this walk, which also breaks cycles). `clear` holds the
 * files known to reach no mention: every file of a walk that found none.
 */
function reachesMark(file, clear, visiting) {
  if (visiting.has(file) || clear.has(file)) return false;
  visiting.add(file);
  const text = readFileSync(file, 'utf8');
  if (text.includes(MARK)) return true;
  for (const match of text.matchAll(RELATIVE_IMPORT)) {
    const target = resolveSpecifier(file, match[1]);
    // An import that names no file here fails the test run by itself: count it as dependent.
    if (target === undefined) return true;
    if (reachesMark(target, clear, visiting)) return true;
  }
  return false;
}

function dependsOnDatabase(file, clear) {
  const visiting = new Set();
  if (reachesMark(file, clear, visiting)) return true;
  for (const seen of visiting) clear.add(seen);
  return false;
}

/** The test files (`test/….test.ts`, relative to the repository root, sorted) that do not depend on the suite's database. */
export function databaseIndependentTestFiles() {
  const clear = new Set();
  return readdirSync(join(root, 'test'))
    .filter((name) => name.endsWith('.test.ts'))
    .sort()
    .map((name) => join(root, 'test', name))
    .filter((file) => !dependsOnDatabase(file, clear))
    .map((file) => relative(root, file));
}
