import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What users read names things by what they are, never by where the work came from: users never saw
 * the project's issues or work sessions, so "issue 23's scenario" or "the seed query" tells them
 * nothing. Checked on the pages users read and on the settings comments at the top of the
 * benchmark scripts (bench/README.md and CONTRIBUTING.md send readers there).
 */
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

const PAGES = [
  ...['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', 'SECURITY.md', 'CHANGELOG.md', 'bench/README.md', 'test/vendor/README.md'],
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'bench/run.js',
  'bench/events.js',
  'bench/scenarios.js',
  'scripts/time-test-files.mjs',
];

/** Internal names: an issue, a work session or a point of one by number, and "the seed" (the project's first specification). */
const INTERNAL = [/\bissues? #?\d+/i, /\bsessions? #?\d+/i, /\bpoints? \d+ of\b/i, /\bseed query\b/i, /\bthe seed'?s?\b(?! data| rows)/i, /\bthe issue\b/i];

describe('pages users read', () => {
  it.each(PAGES)('%s names no issue, session or other internal document', (page) => {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    const found = lines.flatMap((line, i) => (INTERNAL.some((pattern) => pattern.test(line)) ? [`${page}:${String(i + 1)}: ${line.trim()}`] : []));
    expect(found).toEqual([]);
  });
});
