import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { itWithFolder } from './helpers/cli-process.js';
import { ROOT, run } from './helpers/cli-serve.js';
import { createTestDatabase, TEST_DIALECT } from './helpers/test-database.js';

/**
 * docs/cli.md's copy into PostgreSQL copies from a database that following the docs creates: the
 * one restgraph makes by itself for the built-in example schema (what `npm start` serves). The
 * command runs as printed but for its PostgreSQL URL, a placeholder: the suite's database stands
 * for it (in the SQLite pass, a SQLite file).
 */

const it = itWithFolder('restgraph-copy-doc-');

const page = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
const printed = /^npx restgraph copy --from (\S+) --to (postgres:\/\/\S+)$/m.exec(page);

describe("docs/cli.md's copy to PostgreSQL", () => {
  it('copies from the default database of the built-in example schema, which migrate creates', async ({ folder }) => {
    expect(printed, 'docs/cli.md shows `npx restgraph copy --from … --to postgres://…`').not.toBeNull();
    const from = printed?.[1] ?? '';
    const made = await run(folder, ['migrate']);
    expect(made.code, made.stderr).toBe(0);
    const target = await createTestDatabase(folder.path, 'copy-target');
    try {
      const to = TEST_DIALECT === 'postgres' ? target.url : `sqlite:${join(folder.path, 'copy-target.db')}`;
      const copied = await run(folder, ['copy', '--from', from, '--to', to]);
      expect(copied.stderr).toBe('');
      expect(copied.code).toBe(0);
      expect(copied.stdout).toMatch(/^Copied \d+ rows? \(\d+ tables\)/m);
    } finally {
      await target.drop();
    }
  });
});
