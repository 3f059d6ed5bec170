// Drops the bench's PostgreSQL databases named on the command line (bench/lib/postgres.js runs
// it from the harness's exit handler, which cannot wait for a connection itself).
//
//   node bench/lib/drop-databases.js <admin-url> rg_bench_… [rg_bench_… …]
import pg from 'pg';

const [url, ...names] = process.argv.slice(2);
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
let failed = false;
try {
  await client.connect();
  for (const name of names) {
    if (!/^rg_bench_[a-z0-9_]+$/.test(name)) {
      console.error(`drop-databases: not a bench database: ${name}`);
      failed = true;
      continue;
    }
    try {
      await client.query(`drop database if exists "${name}" with (force)`);
    } catch (error) {
      console.error(`drop-databases: ${name}: ${error.message}`);
      failed = true;
    }
  }
} catch (error) {
  console.error(`drop-databases: ${error.message}`);
  failed = true;
} finally {
  await client.end().catch(() => undefined);
}
process.exit(failed ? 1 : 0);
