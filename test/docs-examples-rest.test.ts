import { describeDocPages } from './helpers/doc-pages.js';

/**
 * The console examples of docs/endpoints.md, docs/list-queries.md and docs/cursors.md, run as printed against a fresh
 * server (test/helpers/doc-pages.ts; the convention: docs/development.md#the-documentation-examples).
 */
describeDocPages('rest');
