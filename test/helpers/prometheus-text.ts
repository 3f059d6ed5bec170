/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for the metrics tests:
 * every line must be a HELP or TYPE comment, a sample of a declared family, or blank; label values
 * are unescaped; values are numbers. Anything else fails the parse, naming the line.
 *
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 */

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum` … for histograms). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const ESCAPES: Record<string, string> = { n: '\n', '\\': '\\', '"': '"' };
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SUFFIXES: Record<Family['type'], readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition must end with a newline');
  for (const [index, line] of lines.entries()) {
    const where = `line ${index + 1}: ${line.slice(0, 200)}`;
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      const [, name = '', help = ''] = /^# HELP (\S+) (.*)$/.exec(line) ?? [];
      if (!NAME.test(name) || families.has(name)) throw new Error(`bad or repeated HELP, ${where}`);
      families.set(name, { name, help, type: 'untyped', samples: [] });
    } else if (line.startsWith('# TYPE ')) {
      const [, name = '', type = ''] = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line) ?? [];
      const family = families.get(name);
      if (family === undefined || family.samples.length > 0) throw new Error(`TYPE without HELP or after samples, ${where}`);
      family.type = type as Family['type'];
    } else if (line.startsWith('#')) {
      throw new Error(`unexpected comment, ${where}`);
    } else {
      const sample = parseSample(line, where);
      const family = [...families.values()].find((f) => SUFFIXES[f.type].some((suffix) => f.name + suffix === sample.name));
      if (family === undefined) throw new Error(`sample of no declared family, ${where}`);
      family.samples.push(sample);
    }
  }
  return families;
}

function parseSample(line: string, where: string): Sample {
  const nameEnd = line.search(/[{ ]/);
  const name = line.slice(0, nameEnd);
  if (!NAME.test(name)) throw new Error(`bad metric name, ${where}`);
  const labels: Record<string, string> = {};
  let at = nameEnd;
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const match = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(at));
      if (match === null) throw new Error(`bad label, ${where}`);
      at += match[0].length;
      let value = '';
      for (;;) {
        const c = line[at];
        if (c === undefined) throw new Error(`unterminated label value, ${where}`);
        at++;
        if (c === '"') break;
        if (c === '\\') {
          const replacement = ESCAPES[line[at++] ?? ''];
          if (replacement === undefined) throw new Error(`bad escape, ${where}`);
          value += replacement;
        } else value += c;
      }
      const key = match[1] ?? '';
      if (key in labels) throw new Error(`repeated label ${key}, ${where}`);
      labels[key] = value;
      if (line[at] === ',') at++;
      else if (line[at] !== '}') throw new Error(`expected , or }, ${where}`);
    }
    at++;
  }
  const rest = line.slice(at);
  const valueText = /^ (\S+)( -?\d+)?$/.exec(rest)?.[1];
  const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : valueText === 'NaN' || valueText === 'Nan' ? NaN : Number(valueText);
  if (valueText === undefined || (Number.isNaN(value) && !/^nan$/i.test(valueText))) throw new Error(`bad value, ${where}`);
  return { name, labels, value };
}

/** The value of the one sample of `family` (and suffix) whose labels include `labels`; 0 when there is none. */
export function valueOf(families: Map<string, Family>, family: string, labels: Record<string, string> = {}, suffix = ''): number {
  const found = families.get(family)?.samples.filter((s) => s.name === family + suffix && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) ?? [];
  if (found.length > 1) throw new Error(`${found.length} samples of ${family}${suffix} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
