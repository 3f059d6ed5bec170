import { describeDocPages } from './helpers/doc-pages.js';

/**
 * The console examples of docs/conditional-requests.md, docs/idempotency.md and docs/errors.md, run as printed against a fresh
 * server (test/helpers/doc-pages.ts; the convention: docs/development.md#the-documentation-examples).
 */
describeDocPages('rest-writes');
