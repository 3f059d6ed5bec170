import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChaosContext, ChaosScenario, ScenarioResult } from './scenario.js';

/**
 * The fault-and-abuse suite (`npm run chaos`): runs every scenario of chaos/scenarios/, prints each
 * result, then `N passed, N failed`; resolves to the exit code (1 when any failed).
 *
 * Arguments: `--short` (CI's quick version), `--seed <n>` (replay a run), `--only <text>` (only
 * the scenario files whose name contains it).
 */
export async function runChaos(argv: readonly string[]): Promise<number> {
  const args = parseArguments(argv);
  const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const folder = join(root, 'chaos', 'scenarios');
  const files = readdirSync(folder)
    .filter((name) => name.endsWith('.ts') && (args.only === undefined || name.includes(args.only)))
    .sort();
  out(`chaos: ${files.length} scenario file${files.length === 1 ? '' : 's'}, seed ${args.seed}${args.short ? ', short version' : ''}`);
  out(`       replay with: npm run chaos -- --seed ${args.seed}${args.short ? ' --short' : ''}`);
  const results: ScenarioResult[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(folder, file)).href)) as Record<string, unknown>;
    const exported = Object.entries(module).sort(([a], [b]) => (a === 'default' ? -1 : b === 'default' ? 1 : 0));
    for (const [name, scenario] of exported) {
      if (typeof scenario !== 'function') continue;
      const label = `${file.replace(/\.ts$/, '')}${name === 'default' ? '' : `#${name}`}`;
      const context: ChaosContext = { short: args.short, seed: args.seed, root, log: (line) => out(`  [${label}] ${line}`) };
      const started = performance.now();
      out(`- ${label}`);
      let outcome: ScenarioResult[];
      try {
        const result = await (scenario as ChaosScenario)(context);
        outcome = Array.isArray(result) ? [...(result as readonly ScenarioResult[])] : [result as ScenarioResult];
      } catch (error) {
        outcome = [{ name: label, passed: false, detail: `threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` }];
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      for (const result of outcome) {
        out(`${result.passed ? 'PASS' : 'FAIL'} ${result.name}`);
        out(indent(result.detail));
      }
      out(`  (${label}: ${seconds} s)`);
      results.push(...outcome);
    }
  }
  const passed = results.filter((r) => r.passed).length;
  const failed = results.length - passed;
  out(`\n${passed} passed, ${failed} failed`);
  if (failed > 0) out(`replay with: npm run chaos -- --seed ${args.seed}${args.short ? ' --short' : ''}`);
  return failed > 0 || results.length === 0 ? 1 : 0;
}

interface ChaosArguments {
  short: boolean;
  seed: number;
  only: string | undefined;
}

function parseArguments(argv: readonly string[]): ChaosArguments {
  const args: ChaosArguments = { short: false, seed: Math.floor(Math.random() * 2 ** 31), only: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--short') args.short = true;
    else if (arg === '--seed' && value !== undefined && /^\d{1,10}$/.test(value)) {
      args.seed = Number(value);
      i++;
    } else if (arg === '--only' && value !== undefined) {
      args.only = value;
      i++;
    } else throw new Error(`unknown argument ${arg ?? ''}; use --short, --seed <integer>, --only <scenario file name part>`);
  }
  return args;
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
