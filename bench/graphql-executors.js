// What running GraphQL documents on graphql-js instead of graphql-jit's compiled form would cost,
// in one process: `node bench/graphql-executors.js` (after npm run build).
//
// restgraph runs documents made of fields alone compiled by graphql-jit, and every other document
// (fragments, @skip/@include) on graphql-js, which always gives what the GraphQL specification
// says (src/graphql/compiled-execution.ts). This measures both executors on the benchmark's
// GraphQL queries (bench/scenarios.js: `user(id)`, and a user with their last two posts' titles), over the same app, data and
// prepared arguments: N executions each, alternating rounds, medians. It prints the time of
// preparation alone (parse cache, limits, cost) and of preparation plus execution with each
// executor, and the time graphql-js would add to each request: set against a request's time in
// `npm run bench` (1,000,000 / its req/s on the server's one core), that says roughly what its
// req/s would lose.
//
// Env: EXEC_N (executions per round, default 5000), EXEC_ROUNDS (default 5).
import { execute } from 'graphql';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../dist/app/build-app.js';
import { CompiledExecution } from '../dist/graphql/compiled-execution.js';

const N = Number(process.env.EXEC_N ?? 5000);
const ROUNDS = Number(process.env.EXEC_ROUNDS ?? 5);
const ADMIN = 'bench-admin-token-0123456789abcdef';
const QUERIES = {
  'graphql user(id)': 'query User($id: ID!) { user(id: $id) { id name email bio createdAt updatedAt } }',
  'graphql user with last 2 post titles': 'query UserPosts($id: ID!) { user(id: $id) { name posts(last: 2) { title } } }',
};

const dir = mkdtempSync(join(tmpdir(), 'rg-executors-'));
const app = await buildApp({ databaseUrl: `sqlite:${join(dir, 'bench.db')}`, logLevel: 'warn', adminToken: ADMIN });
const headers = { authorization: `Bearer ${ADMIN}` };
for (let i = 1; i <= 100; i++) {
  await app.inject({ method: 'POST', url: '/users', headers, payload: { name: `user-${i}`, email: `user${i}@example.com` } });
  for (let j = 0; j < 3; j++) await app.inject({ method: 'POST', url: '/posts', headers, payload: { title: `post ${i}.${j}`, userId: i } });
}
const service = app.restgraph.graphql;
const ctx = { principal: await app.restgraph.authenticator.authenticate(`Bearer ${ADMIN}`), requestId: 'bench', clientAddress: '127.0.0.1' };
const compiled = new CompiledExecution();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const microseconds = async (run) => {
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await run(String(1 + (i % 100)));
  return Number(process.hrtime.bigint() - started) / 1000 / N;
};
const prepared = async (query, id) => {
  const args = await service.prepare({ query, variables: { id } }, ctx);
  if (Array.isArray(args)) throw new Error(JSON.stringify(args));
  return args;
};
const checked = (result) => {
  if (result.errors !== undefined) throw new Error(JSON.stringify(result.errors));
};

console.log(`${N} executions per round, ${ROUNDS} rounds, medians (µs per operation)`);
for (const [name, query] of Object.entries(QUERIES)) {
  const first = await prepared(query, '1');
  compiled.admit(first.document);
  const runs = {
    prepare: async (id) => void (await prepared(query, id)),
    'graphql-jit': async (id) => checked(await compiled.execute(await prepared(query, id))),
    'graphql-js': async (id) => checked(await execute(await prepared(query, id))),
  };
  const times = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (const run of Object.values(runs)) await microseconds(run); // warm-up
  for (let round = 0; round < ROUNDS; round++) for (const [k, run] of Object.entries(runs)) times[k].push(await microseconds(run));
  const [prepare, jit, js] = ['prepare', 'graphql-jit', 'graphql-js'].map((k) => median(times[k]));
  console.log(
    `${name}: prepare ${prepare.toFixed(1)}; prepare+execute: graphql-jit ${jit.toFixed(1)}, graphql-js ${js.toFixed(1)} ` +
      `(execution alone ${(jit - prepare).toFixed(1)} vs ${(js - prepare).toFixed(1)}: graphql-js/graphql-jit ${((js - prepare) / (jit - prepare)).toFixed(2)}); ` +
      `graphql-js would add ${(js - jit).toFixed(1)} µs to each request`,
  );
}
await app.close();
rmSync(dir, { recursive: true, force: true });
