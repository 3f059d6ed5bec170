#!/usr/bin/env node
// Measures bulk imports into SQLite through the built CLI (npm run build first, or tsc -b
// tsconfig.build.json): generates users of the built-in example schema in a temporary folder, then
// runs, each into a new database file,
//   restgraph import data users.ndjson -d sqlite:<tmp>/a.db    (an export: ids and timestamps given)
//   restgraph import users users.csv -d sqlite:<tmp>/b.db      (CSV text, ids assigned)
// and prints the rows per second each reports (the time of the import itself: reading, checking
// and writing in one transaction; not the process's start-up or the migration).
//
//   node scripts/import-speed.mjs            200,000 users
//   node scripts/import-speed.mjs 50000      another count
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const count = Number(process.argv[2] ?? 200_000);
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'restgraph-import-speed-'));
try {
  const time = '2026-01-01T00:00:00.000Z';
  const ndjson = [];
  const csv = ['name,email,bio'];
  for (let i = 1; i <= count; i++) {
    const bio = i % 3 === 0 ? `Bio of user ${i}, with a comma` : null;
    ndjson.push(JSON.stringify({ resource: 'users', record: { id: i, name: `User ${i}`, email: `user${i}@example.com`, bio, createdAt: time, updatedAt: time } }));
    csv.push(`User ${i},user${i}@example.com,${bio === null ? '' : `"${bio}"`}`);
  }
  writeFileSync(join(dir, 'users.ndjson'), `${ndjson.join('\n')}\n`);
  writeFileSync(join(dir, 'users.csv'), `${csv.join('\n')}\n`);
  for (const args of [
    ['import', 'data', 'users.ndjson', '-d', 'sqlite:a.db'],
    ['import', 'users', 'users.csv', '-d', 'sqlite:b.db'],
  ]) {
    const out = execFileSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, DATABASE_URL: '' } });
    process.stdout.write(`restgraph ${args.join(' ')}\n  ${out.trim()}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
