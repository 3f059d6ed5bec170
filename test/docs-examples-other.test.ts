import { describeDocPages } from './helpers/doc-pages.js';

/**
 * The console examples of every page that no other docs-examples-*.test.ts file names
 * (DOC_PAGE_GROUPS): docs/admin-console.md, docs/cli.md, docs/operations.md, docs/rate-limits.md, docs/schema.md and
 * any new page, run as printed against a fresh server (test/helpers/doc-pages.ts; the convention: docs/development.md#the-documentation-examples).
 */
describeDocPages('other');
