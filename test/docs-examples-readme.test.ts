import { describeDocPages } from './helpers/doc-pages.js';

/**
 * The console examples of README.md, run as printed against a fresh
 * server (test/helpers/doc-pages.ts; the convention: docs/development.md#the-documentation-examples).
 */
describeDocPages('readme');
