// BENCH_VARIANTS: more servers, each `restgraph` (or `baseline`) served another way, to compare
// in one run what an optimisation gains (a checkout without it) or what a Node version changes.
//
//   BENCH_VARIANTS='{"no-warmup": {"checkout": "../wt-no-warmup"},
//                    "node22": {"checkout": "../n22", "node": "/path/to/node22"},
//                    "node22": {"of": "baseline", "checkout": "../n22", "node": "/path/to/node22"}}'
//
// Each entry name → { of?, checkout?, node?, env? } adds the server `<of>-<name>` (of: restgraph,
// the default, or baseline): served from `checkout`'s build (dist/cli/main.js, or its
// bench/baseline/server.js; it must be built: `npm run build`), by the `node` binary given
// (a checkout's native modules must be built for that Node: `npm_config_nodedir=<node's
// directory> npm ci`), with `env` added to its environment. A JSON object cannot repeat a key:
// to vary both servers the same way, name one `node22` and the other `node22 ` … or use
// `"node22": [{...}, {"of": "baseline", ...}]` (a list of entries under one name).
//
// Ratios printed: restgraph/restgraph-<name> for each restgraph variant (above 1: the variant is
// slower, e.g. what the optimisation it lacks gains), and restgraph-<name>/baseline-<name>
// when both exist (the hand-written ceiling on the same Node).
import { resolve } from 'node:path';

function parse() {
  const text = process.env.BENCH_VARIANTS;
  if (text === undefined || text.trim() === '') return [];
  let spec;
  try {
    spec = JSON.parse(text);
  } catch (error) {
    throw new Error(`BENCH_VARIANTS is not JSON: ${error.message}`);
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new Error('BENCH_VARIANTS: a JSON object, name → { of?, checkout?, node?, env? }');
  const out = [];
  for (const [name, value] of Object.entries(spec)) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`BENCH_VARIANTS: bad name ${JSON.stringify(name)} (lower-case letters, digits, dashes)`);
    for (const entry of Array.isArray(value) ? value : [value]) {
      const of = entry.of ?? 'restgraph';
      if (of !== 'restgraph' && of !== 'baseline') throw new Error(`BENCH_VARIANTS ${name}: "of" is restgraph or baseline`);
      out.push({
        name: `${of}-${name}`,
        variant: name,
        of,
        checkout: entry.checkout === undefined ? undefined : resolve(entry.checkout),
        node: entry.node,
        env: entry.env ?? {},
      });
    }
  }
  return out;
}

export const variants = parse();

/** The restgraph variants' server names (they run every scenario restgraph runs). */
export const restgraphVariantNames = variants.filter((v) => v.of === 'restgraph').map((v) => v.name);

/** subject/reference pairs whose ratio is printed, with the least expected (a variant may cost at most 10 %). */
export const variantPairs = Object.fromEntries([
  ...restgraphVariantNames.map((name) => [`restgraph/${name}`, 0.9]),
  ...variants
    .filter((v) => v.of === 'baseline' && restgraphVariantNames.includes(`restgraph-${v.variant}`))
    .map((v) => [`restgraph-${v.variant}/${v.name}`, 0.8]),
]);
