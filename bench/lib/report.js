// The REST tables of bench/run.js (ratios against their targets, notes) and the formatting
// the event benchmarks share with them.
import { DBJSON_SERVERS, DBJSON_SUBJECT } from '../dbjson-scenarios.js';
import { scenarioFor, scenarios as allScenarios } from '../scenarios.js';

/** The server whose ratios are judged. */
export const SUBJECT = 'restgraph';
/** The same on PostgreSQL: judged against the references on PostgreSQL, with the same targets. */
export const PG_SUBJECT = 'restgraph-pg';
/** References on PostgreSQL: restgraph-pg / reference (every other reference: restgraph / reference). */
const PG_REFERENCES = new Set(['baseline-pg']);
/** The servers of the PostgreSQL table. */
export const PG_SERVERS = new Set([PG_SUBJECT, ...PG_REFERENCES]);
/** The servers of the db.json table: restgraph-dbjson / json-server, on the same db.json of posts. */
const DBJSON = new Set(DBJSON_SERVERS);
/** The server a reference is compared with. */
export const subjectOf = (reference) => (PG_REFERENCES.has(reference) ? PG_SUBJECT : DBJSON.has(reference) ? DBJSON_SUBJECT : SUBJECT);
/** Other processes using more than this share of a CPU during a run disturb it (warned). */
export const OTHER_CPU_LIMIT = 0.05;

export const fmtRate = (n) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
export const fmtPct = (x) => `${Math.round(x * 100)}%`;
export const fmtMs = (n) => (n == null || Number.isNaN(n) ? 'n/a' : Math.abs(n) >= 100 ? String(Math.round(n)) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));
export const fmtCount = (n) => n.toLocaleString('en-US');

/** Prints rows (the first is the header) as a table; columns in `leftColumns` are left-aligned. */
export function renderTable(rows, leftColumns = [0]) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (cells) =>
    cells.map((cell, c) => (leftColumns.includes(c) ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ').trimEnd();
  console.log(line(rows[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const r of rows.slice(1)) console.log(line(r));
}

export const failures = (r) =>
  r ? (r.non2xx ?? 0) + (r.errors ?? 0) + (r.timeouts ?? 0) + (r.requests === 0 ? 1 : 0) : 0;

export function describeFailures(r) {
  const parts = [];
  if (r.requests === 0) parts.push('no request completed');
  if (r.non2xx) {
    const codes = r.statusCodes
      ? Object.entries(r.statusCodes)
          .filter(([code]) => !code.startsWith('2'))
          .map(([code, n]) => `${code}x${n}`)
          .join(' ')
      : '';
    parts.push(`${r.non2xx} non-2xx${codes ? ` (${codes})` : ''}`);
  }
  if (r.errors) parts.push(`${r.errors} socket errors`);
  if (r.timeouts) parts.push(`${r.timeouts} timeouts`);
  if (r.poolWrapped) parts.push('request pool wrapped: repeated bodies');
  return parts.join(', ');
}

export function computeRatios(out) {
  for (const row of out.scenarios) {
    const scenario = allScenarios.find((s) => s.name === row.name);
    row.ratios = {};
    for (const [reference, target] of Object.entries(scenario.targets ?? {})) {
      const subjectName = subjectOf(reference);
      const subject = row.results[subjectName];
      const ref = row.results[reference];
      if (!subject?.reqPerSec || !ref?.reqPerSec) continue;
      const value = subject.reqPerSec / ref.reqPerSec;
      const clean = failures(subject) === 0 && !row.checks[subjectName];
      // A target of null: the ratio is shown, not judged.
      const pass = target === null ? null : clean && value >= target;
      row.ratios[reference] = { value, target, pass, flagged: !clean || failures(ref) > 0, subject: subjectName };
    }
    // Two configurations of restgraph side by side: `subject/reference` in scenario.pairTargets.
    row.pairRatios = {};
    for (const [pair, target] of Object.entries(scenario.pairTargets ?? {})) {
      const [subjectName, referenceName] = pair.split('/');
      const subject = row.results[subjectName];
      const ref = row.results[referenceName];
      if (!subject?.reqPerSec || !ref?.reqPerSec) continue;
      const value = subject.reqPerSec / ref.reqPerSec;
      const clean = failures(subject) === 0 && !row.checks[subjectName];
      row.pairRatios[pair] = { value, target, pass: clean && value >= target, flagged: !clean || failures(ref) > 0 };
    }
    row.scenarioRatios = {};
    const subject = row.results[SUBJECT];
    for (const [otherName, target] of Object.entries(scenario.scenarioTargets ?? {})) {
      const other = out.scenarios.find((r) => r.name === otherName)?.results[SUBJECT];
      if (!subject?.reqPerSec || !other?.reqPerSec) continue;
      const value = subject.reqPerSec / other.reqPerSec;
      const clean = failures(subject) === 0 && !row.checks[SUBJECT];
      row.scenarioRatios[otherName] = { value, target, pass: clean && value >= target, flagged: !clean || failures(other) > 0 };
    }
  }
}

/**
 * Prints the results of one size: a table of the SQLite servers, one of the db.json servers
 * (restgraph-dbjson and json-server on a db.json of as many posts), then one of the PostgreSQL
 * servers, each with its ratios and notes.
 */
export function printTable(out, { servers, config, postgresVersion }) {
  const names = servers.map((s) => s.name);
  const rounds = config.rounds > 1 ? `, median of ${config.rounds} rounds` : '';
  const run = `${config.engine}, ${config.connections} connections, ${config.duration} s${rounds}`;
  const sqliteNames = names.filter((n) => !PG_SERVERS.has(n) && !DBJSON.has(n));
  const dbJsonNames = names.filter((n) => DBJSON.has(n));
  const pgNames = names.filter((n) => PG_SERVERS.has(n));
  if (sqliteNames.length) {
    console.log(`\n${fmtCount(out.size)} users, ${run}:`);
    printGroup(out, { names: sqliteNames, subject: SUBJECT, config });
    for (const row of out.scenarios) {
      for (const [otherName, ratio] of Object.entries(row.scenarioRatios ?? {})) {
        console.log(
          `${SUBJECT}: ${row.name} / ${otherName} = ${ratio.value.toFixed(2)} ${ratio.pass ? 'PASS' : 'MISS'} (>= ${ratio.target})${ratio.flagged ? ' !' : ''}`,
        );
      }
      for (const [pair, ratio] of Object.entries(row.pairRatios ?? {})) {
        console.log(`${row.name}: ${pair} = ${ratio.value.toFixed(2)} ${ratio.pass ? 'PASS' : 'MISS'} (>= ${ratio.target})${ratio.flagged ? ' !' : ''}`);
      }
    }
    printNotes(out, sqliteNames, config);
  }
  if (dbJsonNames.length) {
    console.log(`\n${fmtCount(out.size)} posts in a json-server db.json, ${run}:`);
    printGroup(out, { names: dbJsonNames, subject: DBJSON_SUBJECT, config });
    printNotes(out, dbJsonNames, config);
    const started = dbJsonNames.filter((n) => out.servers[n]?.startSeconds?.length);
    const seconds = (n) => out.servers[n].startSeconds.map((t) => t.toFixed(1)).join(' / ');
    if (started.length) console.log(`start-up until it answers (restgraph-dbjson: its first, importing db.json): ${started.map((n) => `${n} ${seconds(n)} s`).join(', ')}`);
  }
  if (pgNames.length) {
    const skipped = pgNames.map((n) => out.servers[n]?.skipped).filter(Boolean);
    const version = postgresVersion ? ` ${postgresVersion}` : '';
    console.log(`\n${fmtCount(out.size)} users on PostgreSQL${version}, ${run}:`);
    if (skipped.length === pgNames.length) {
      console.log(`skipped: ${skipped[0]}`);
    } else {
      printGroup(out, { names: pgNames, subject: PG_SUBJECT, config });
      printNotes(out, pgNames, config);
      console.log(
        '~ PostgreSQL is not pinned: its processes run on both CPUs, beside the server on CPU 0 and the load ' +
          'generator on CPU 1 (on a 2-core machine they compete with both); "postgres CPU" in the lines above is ' +
          'what its backends for that server took, in CPUs. Compare these figures with each other, not with the SQLite table.',
      );
    }
  }
  console.log(
    '(! = failed requests: non-2xx, socket errors or timeouts; * = differs from the expected API; ' +
      `~ = measurement caveat${config.engine === 'wrk' ? '; wrk counts status >= 400 as non-2xx' : ''})`,
  );
}

/** One table: the scenarios that apply to any of `names`, their results, and `subject`'s ratios. */
function printGroup(out, { names, subject }) {
  const references = [...new Set(allScenarios.flatMap((s) => Object.keys(s.targets ?? {})))].filter(
    (r) => names.includes(r) && subjectOf(r) === subject,
  );
  const header = ['scenario'];
  for (const name of names) header.push(`${name} req/s`, 'p99 ms');
  for (const ref of references) header.push(`${subject}/${ref}`);
  const rows = [header];
  for (const row of out.scenarios) {
    const scenario = allScenarios.find((s) => s.name === row.name);
    if (!names.some((name) => scenarioFor(scenario, name))) continue;
    const cells = [row.name];
    for (const name of names) {
      const r = row.results[name];
      const status = out.servers[name];
      if (!r) cells.push(status?.skipped ? 'skipped' : status?.error ? 'failed' : '-', '');
      else if (r.error) cells.push('failed', '');
      else {
        const mark = failures(r) > 0 ? ' !' : row.checks[name] ? ' *' : '';
        cells.push(fmtRate(r.reqPerSec) + mark, fmtMs(r.p99Ms));
      }
    }
    for (const ref of references) {
      const ratio = row.ratios[ref];
      const target = scenario.targets?.[ref];
      const judged = target === null ? '' : ` (>= ${target})`;
      if (!ratio) cells.push(target === undefined ? '' : `n/a${judged}`);
      else {
        const value = ratio.value >= 10 ? ratio.value.toFixed(1) : ratio.value.toFixed(2);
        const verdict = target === null ? '' : ratio.pass ? ' PASS' : ' MISS';
        cells.push(`${value}${verdict}${judged}${ratio.flagged ? ' !' : ''}`);
      }
    }
    rows.push(cells);
  }
  renderTable(rows);
}

/** The failures and measurement caveats of `names`' results. */
function printNotes(out, names, config) {
  const notes = [];
  for (const row of out.scenarios) {
    for (const name of names) {
      const r = row.results[name];
      if (r && !r.error) {
        if (failures(r)) notes.push(`! ${name} / ${row.name}: ${describeFailures(r)} of ${r.requests} requests`);
        if (r.connections < config.connections) {
          notes.push(
            `~ ${name} / ${row.name}: ran with ${r.connections} connection(s), not ${config.connections}: ` +
              `a request alone took ${fmtMs(r.probeLatencyMs)} ms (p99 not comparable)`,
          );
        }
        if (r.otherCpu > OTHER_CPU_LIMIT) {
          notes.push(`~ ${name} / ${row.name}: other processes took ${fmtPct(r.otherCpu)} of a CPU meanwhile: figures disturbed`);
        }
        if (r.serverCpu != null && r.serverCpu < 0.85) {
          notes.push(`~ ${name} / ${row.name}: server CPU ${fmtPct(r.serverCpu)}, not saturated (load generator, I/O or waits)`);
        }
      }
      if (r?.error) notes.push(`! ${name} / ${row.name}: ${r.error.split('\n')[0]}`);
      if (r?.failedRounds) notes.push(`! ${name} / ${row.name}: failed in ${r.failedRounds} round(s), see latest.json`);
      if (row.checks[name]) notes.push(`* ${name} / ${row.name}: check: ${row.checks[name].join('; ')}`);
    }
  }
  for (const note of notes) console.log(note);
}
