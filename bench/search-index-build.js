// How long adding `searchable` to two fields of a table of 100,000 rows takes at start-up: the
// migration that builds the full-text index from the rows (SQLite: an FTS5 table filled from the
// rows, and its triggers; PostgreSQL: a generated tsvector column and its GIN index).
//
//   npm run build && node bench/search-index-build.js [rows]
//
// SQLite in a temporary file; PostgreSQL in a schema of its own, dropped afterwards, in the
// database RESTGRAPH_BENCH_POSTGRES_URL names (default postgres://postgres@127.0.0.1:5432/test;
// set it to "" to skip PostgreSQL). Prints one line per database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseSchemaText } from '../dist/schema/load-schema.js';
import { openDatabase } from '../dist/store/open-database.js';
import { migrateToSchema } from '../dist/store/migrate.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const PLAIN = 'resources:\n  posts:\n    fields:\n      title: { type: string }\n      body: { type: string }\n';
const SEARCHABLE = 'resources:\n  posts:\n    fields:\n      title: { type: string, searchable: true }\n      body: { type: string, searchable: true }\n';
const WORDS = 'sqlite postgres index query planner search text word table row column page cursor filter sort relation schema field value token event hook stream cache disk memory write read commit lock'.split(' ');

/** A text of `min` to `max` words, the same for the same seed. */
function text(seed, min, max) {
  let x = seed * 2654435761 % 4294967296;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const n = min + (next() % (max - min + 1));
  const words = [];
  for (let i = 0; i < n; i++) words.push(WORDS[next() % WORDS.length] + (next() % 7 === 0 ? String(next() % 1000) : ''));
  return words.join(' ');
}

async function measure(url, label) {
  const { db, rules } = await openDatabase(url);
  try {
    await migrateToSchema(db, rules, parseSchemaText(PLAIN));
    const now = new Date().toISOString();
    for (let start = 0; start < ROWS; start += 500) {
      const values = [];
      for (let i = start; i < Math.min(ROWS, start + 500); i++) {
        values.push({ title: text(i, 3, 8), body: text(i + 7, 30, 80), createdAt: now, updatedAt: now });
      }
      await db.transaction(async (tx) => {
        await tx.run(db.builder.insertInto('posts').values(values).compile());
      });
    }
    const began = process.hrtime.bigint();
    const changes = await migrateToSchema(db, rules, parseSchemaText(SEARCHABLE));
    const seconds = Number(process.hrtime.bigint() - began) / 1e9;
    console.log(`${label}: ${changes.map((c) => c.description).join('; ')}: ${ROWS} rows in ${seconds.toFixed(1)} s`);
  } finally {
    await db.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'restgraph-search-bench-'));
try {
  await measure(`sqlite:${join(dir, 'bench.db')}`, 'SQLite');
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const postgresUrl = process.env.RESTGRAPH_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
if (postgresUrl !== '') {
  const schema = `rg_search_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  try {
    const separator = postgresUrl.includes('?') ? '&' : '?';
    await measure(`${postgresUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`, 'PostgreSQL');
  } finally {
    await admin.query(`drop schema "${schema}" cascade`);
    await admin.end();
  }
}
