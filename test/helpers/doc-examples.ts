/**
 * The console examples of README.md and docs/*.md, read as tests (test/docs-examples.test.ts).
 * The convention, also described in docs/README.md ("Examples are tested"):
 *
 * - Only ```console blocks run. Other fences (```sh, ```text, ```js, …) are illustrations.
 * - In a console block, a line starting with `$ ` is a command; it goes on over the next lines
 *   while a quote or a here-document (`<<'EOF'`) is open, or the line ends with a backslash. The lines after it, up to the next
 *   command, are the output it must print (blank lines at its end do not count). A line that
 *   is only `…` stands for any number of lines.
 * - A page's blocks run in order, in one shell, in an empty folder of their own (with the
 *   project's dist/, examples/ and node_modules/ linked into it): variables set by one command
 *   are there for the next. `npm start` and `npx restgraph` run the built CLI; `npm install`
 *   does nothing (the project is installed already).
 * - A command that starts the server (`npm start`, `npx restgraph serve`, with or without
 *   variables before it) runs in the background, as in a second terminal: its output is what it
 *   printed once it is listening, and starting another stops the one before (as Ctrl-C would).
 *   A command ending with `&` runs in the background too, and the next command follows at once
 *   (as when the block is pasted into a shell); what it printed is the output of the `wait` that
 *   waits for it (alone or first in a list: `wait; cat subscriber.log`).
 * - Values that differ from run to run are compared by their form: API keys, timestamps (and the
 *   times of day of the readable log), ids of requests, webhook secrets, cursors and hashed ETags, process ids, durations, lengths, the
 *   time left in a rate-limit window. The value a page shows stands for the one the run got: a
 *   later command that uses it (`ADMIN=rg_…`, `If-Match: "…"`) is given the real one, and a value
 *   shown twice must be the same twice (but for timestamps: two moments a page shows as one may
 *   be a millisecond apart in another run).
 * - The responses' Date, Connection, Keep-Alive and generated X-Request-Id headers are left out.
 */

/** One `$ command` and the output it must print. */
export interface DocCommand {
  command: string;
  expected: string;
  /** 1-based line of the `$` in its file. */
  line: number;
  /** 1-based line of the first line of output, and how many lines the shown output has. */
  outputLine: number;
  outputLines: number;
}

export interface DocBlock {
  line: number;
  commands: DocCommand[];
}

/** The console blocks of a markdown text, in order. */
export function consoleBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A fence may be indented (in a list item): its lines lose that indentation.
    const fence = /^( *)(`{3,})(\S*)/.exec(lines[i] ?? '');
    if (!fence) continue;
    const [indent = '', ticks = ''] = [fence[1], fence[2]];
    const end = lines.findIndex((line, j) => j > i && line.trim() === ticks);
    if (end < 0) throw new Error(`line ${i + 1}: a code block that never ends`);
    const content = lines.slice(i + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()));
    if (fence[3] === 'console') blocks.push({ line: i + 1, commands: commandsOf(content, i + 2) });
    i = end;
  }
  return blocks;
}

function commandsOf(all: string[], firstLine: number): DocCommand[] {
  const lines = (index: number): string => all[index] ?? '';
  const commands: DocCommand[] = [];
  let i = 0;
  while (i < all.length) {
    if (!lines(i).startsWith('$ ')) {
      if (commands.length === 0 && lines(i).trim() !== '') throw new Error(`line ${firstLine + i}: a console block must start with a "$ " command`);
      i++;
      continue;
    }
    const line = firstLine + i;
    let command = lines(i).slice(2);
    while (continues(command) && i + 1 < all.length) command += `\n${lines(++i)}`;
    i++;
    const outputLine = firstLine + i;
    const output: string[] = [];
    while (i < all.length && !lines(i).startsWith('$ ')) output.push(lines(i++));
    const expected = trimEnd(output.join('\n'));
    commands.push({ command, expected, line, outputLine, outputLines: expected === '' ? 0 : expected.split('\n').length });
  }
  return commands;
}

/** Whether a command goes on to the next line: an open quote or here-document, or a final backslash. */
function continues(command: string): boolean {
  const hereDocument = /<<-?\s*'?([A-Za-z_]+)'?/.exec(command);
  if (hereDocument) return !command.split('\n').slice(1).includes(hereDocument[1] ?? '');
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') {
      if (i === command.length - 1) return true;
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(command[i - 1] ?? ''))) {
      const eol = command.indexOf('\n', i);
      if (eol < 0) return false;
      i = eol;
    }
  }
  return quote !== undefined;
}

function trimEnd(text: string): string {
  return text.replace(/\s+$/, '');
}

/**
 * The forms of values that change from run to run. `mapped`: the value shown stands for the
 * value of the run (same shown value, same real value; later commands get the real one).
 */
const VOLATILE: { name: string; pattern: string; mapped: boolean; loose?: boolean }[] = [
  { name: 'api key', pattern: 'rg_[A-Za-z0-9_-]{43}', mapped: true },
  { name: 'api key prefix', pattern: 'rg_[A-Za-z0-9_-]{8}(?![A-Za-z0-9_-])', mapped: true },
  // Two moments a page shows as one may be a millisecond apart in another run: not held to it.
  { name: 'timestamp', pattern: '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z', mapped: true, loose: true },
  { name: 'uuid', pattern: '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', mapped: true },
  { name: 'webhook secret', pattern: 'whsec_[A-Za-z0-9+/=]+', mapped: true },
  { name: 'webhook message id', pattern: 'msg_[A-Za-z0-9_-]+', mapped: true },
  { name: 'cursor', pattern: 'eyJ[A-Za-z0-9_-]+', mapped: true },
  // Also inside a JSON string, where its closing quote is escaped (a 412's "the current ETag is \"…\"").
  { name: 'hashed etag', pattern: '(?<=")[A-Za-z0-9_-]{27}(?=\\\\?")', mapped: true },
  { name: 'signature', pattern: '(?<=v1,)[A-Za-z0-9+/=]{44}', mapped: false },
  { name: 'process id', pattern: '(?<="pid":)\\d+', mapped: false },
  { name: 'host name', pattern: '(?<="hostname":")[^"]*(?=")', mapped: false },
  { name: 'duration', pattern: '(?<="durationMs":)[\\d.]+', mapped: false },
  // The readable log: `[08:49:22.668] INFO: GET /users 200 1.4ms`.
  { name: 'clock time', pattern: '(?<=^\\[)\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(?=\\] )', mapped: false },
  { name: 'request time', pattern: '(?<= \\d{3} )\\d+(?:\\.\\d)?(?=ms$)', mapped: false },
  { name: 'content length', pattern: '(?<=^content-length: )\\d+', mapped: false },
  { name: 'window time left', pattern: '(?<=;t=)\\d+', mapped: false },
  { name: 'quota left', pattern: '(?<=;r=)\\d+', mapped: false },
  { name: 'retry after', pattern: '(?<=^retry-after: )\\d+', mapped: false },
  { name: 'seconds to wait', pattern: '(?<=try again in )\\d+(?= s)', mapped: false },
  // restgraph import: "… in 0.01 s (200 rows/s)."
  { name: 'import time', pattern: '(?<= in )\\d+\\.\\d\\d(?= s \\d*)', mapped: false },
  { name: 'import rate', pattern: '\\d+(?= rows/s)', mapped: false },
];

const VOLATILE_ANY = new RegExp(VOLATILE.map((v) => `(${v.pattern})`).join('|'), 'gm');

/** Which form of VOLATILE a match of VOLATILE_ANY has. */
function formOf(match: RegExpMatchArray): { index: number; pattern: string; mapped: boolean; loose?: boolean } {
  const index = match.slice(1).findIndex((group: string | undefined) => group !== undefined);
  const form = VOLATILE[index];
  if (!form) throw new Error(`no volatile form matched ${match[0]}`);
  return { index, ...form };
}

/** Values seen so far: what a page shows, and what the run got. */
export type ValueMap = Map<string, string>;

/** A command with the values it shows replaced by those of the run (whole values only). */
export function substitute(command: string, values: ValueMap): string {
  return command.replace(VOLATILE_ANY, (value) => values.get(value) ?? value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Compares the output of a run with the output a page shows. Returns undefined when they match
 * (recording the values the page's volatile ones stood for), or why not.
 */
export function compareOutput(expected: string, actual: string, values: ValueMap): string | undefined {
  const groups: { index: number; mapped: boolean; loose: boolean; shown: string }[] = [];
  let groupCount = 0;
  const lines = expected.split('\n');
  let source = '^';
  lines.forEach((text, index) => {
    const last = index === lines.length - 1;
    if (text === '…') {
      // Any number of lines: here, or at the end (after the previous line's end).
      if (!last) source += '(?:[^\\n]*\\n)*?';
      else if (index === 0) source += '[^]*';
      else source = `${source.slice(0, -2)}(?:\\n[^]*)?`;
      return;
    }
    let at = 0;
    for (const match of text.matchAll(VOLATILE_ANY)) {
      source += escapeRegExp(text.slice(at, match.index));
      const kind = formOf(match);
      source += `(${kind.pattern.replace(/\(\?<=[^)]*\)|\(\?=[^)]*\)|\(\?![^)]*\)/g, '')})`;
      groups.push({ index: ++groupCount, mapped: kind.mapped, loose: kind.loose === true, shown: match[0] });
      at = match.index + match[0].length;
    }
    source += escapeRegExp(text.slice(at));
    if (!last) source += '\\n';
  });
  const match = new RegExp(`${source}$`).exec(actual);
  if (!match) return 'the output differs';
  const learnt = new Map<string, string>();
  for (const group of groups) {
    if (!group.mapped) continue;
    const real = match[group.index] ?? '';
    const known = learnt.get(group.shown) ?? values.get(group.shown);
    if (known !== undefined && known !== real && group.shown !== real && !group.loose) {
      return `${group.shown} stood for ${known} before, and here for ${real}`;
    }
    learnt.set(group.shown, real);
  }
  for (const [shown, real] of learnt) {
    values.set(shown, real);
    // An API key's first 11 characters are its prefix, shown in lists.
    if (/^rg_[A-Za-z0-9_-]{43}$/.test(shown)) values.set(shown.slice(0, 11), real.slice(0, 11));
  }
  return undefined;
}

/**
 * For rewriting a page's outputs (DOCS_EXAMPLES_UPDATE=1): pairs the volatile values a page
 * shows with those of the run, in order, where their forms line up.
 */
export function pairValues(expected: string, actual: string, values: ValueMap): void {
  const shown = [...expected.matchAll(VOLATILE_ANY)];
  const real = [...actual.matchAll(VOLATILE_ANY)];
  for (let i = 0; i < Math.min(shown.length, real.length); i++) {
    const [a, b] = [shown[i], real[i]];
    if (!a || !b || formOf(a).index !== formOf(b).index) break;
    if (formOf(a).mapped && !values.has(a[0])) values.set(a[0], b[0]);
  }
}
