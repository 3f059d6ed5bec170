import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as errors from '../src/errors.js';
import { RestgraphError } from '../src/errors.js';

/**
 * docs/errors.md documents every error code (STYLE.md: "a test fails when a code is missing from
 * the errors documentation"): one `### <code>` section per RestgraphError class in src/errors.ts,
 * and no section for a code that does not exist.
 */

type ErrorClass = abstract new (...args: never[]) => RestgraphError;

const DOCS = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

/** Every exported class that extends RestgraphError (not RestgraphError itself). */
const errorClasses: [string, ErrorClass][] = Object.entries(errors).flatMap(([name, value]): [string, ErrorClass][] =>
  typeof value === 'function' && value.prototype instanceof RestgraphError ? [[name, value]] : [],
);

/** Builds one instance of each class, with its own constructor's arguments. */
function instantiate(errorClass: ErrorClass): RestgraphError {
  if (errorClass === errors.InternalError) return new errors.InternalError({});
  if (errorClass === errors.SchemaError) return new errors.SchemaError('schema.yaml', [{ path: 'resources.users', message: 'is wrong', line: 3, column: 5 }]);
  if (errorClass === errors.ConfigError) return new errors.ConfigError('PORT', 'must be an integer');
  if (errorClass === errors.DestructiveMigrationError) return new errors.DestructiveMigrationError(['drop field users.bio']);
  const withDetail = errorClass as unknown as new (detail: string, options: { errors?: errors.ErrorDetail[] }) => RestgraphError;
  return new withDetail('Something is wrong.', {});
}

/** `### <code>` headings of docs/errors.md and the text of each section (up to the next heading). */
function documentedSections(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = markdown.split(/^### /m).slice(1);
  for (const part of parts) {
    const newline = part.indexOf('\n');
    const heading = (newline === -1 ? part : part.slice(0, newline)).trim();
    const body = newline === -1 ? '' : part.slice(newline + 1).split(/^##? /m)[0] ?? '';
    sections.set(heading, body);
  }
  return sections;
}

const instances = errorClasses.map(([name, errorClass]) => ({ name, error: instantiate(errorClass) }));
const codes = instances.map((i) => i.error.code);
const sections = documentedSections(DOCS);

describe('docs/errors.md', () => {
  it('finds every error class of src/errors.ts', () => {
    // 19 HTTP codes and 4 start-up codes today; a lower count means discovery broke.
    expect(instances.length).toBeGreaterThanOrEqual(23);
    for (const { name, error } of instances) {
      expect(error, name).toBeInstanceOf(RestgraphError);
      expect(error.code, name).toMatch(/^([a-z]+(-[a-z]+)*|RG_[A-Z]+(_[A-Z]+)*)$/);
      expect(error.title, name).not.toBe('');
      expect(Number.isInteger(error.status), name).toBe(true);
    }
  });

  it('gives every error class its own code', () => {
    expect(new Set(codes).size).toBe(codes.length);
  });

  for (const { name, error } of instances) {
    it(`documents ${error.code} (${name}) under "### ${error.code}"`, () => {
      expect([...sections.keys()], `docs/errors.md has no "### ${error.code}" section`).toContain(error.code);
    });
    if (!error.code.startsWith('RG_')) {
      it(`states the status and title of ${error.code} as the class does`, () => {
        const section = sections.get(error.code) ?? '';
        expect(section).toContain(`**Status:** ${error.status} · **Title:** ${error.title}`);
        // Codes only GraphQL requests meet are shown as a GraphQL error (extensions.code), the rest as problem+json.
        if (!section.includes('"extensions"')) expect(section).toContain(`"type": "urn:restgraph:problem:${error.code}"`);
        expect(section).toContain(`"code": "${error.code}"`);
        expect(section).toContain(`"status": ${error.status}`);
      });
    } else {
      it(`shows the stderr line of ${error.code}`, () => {
        expect(sections.get(error.code) ?? '').toContain(`[${error.code}]`);
      });
    }
  }

  it('documents no code that does not exist', () => {
    const stale = [...sections.keys()].filter((heading) => !codes.includes(heading));
    expect(stale).toEqual([]);
  });
});
