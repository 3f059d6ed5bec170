import { describeDocPages } from './helpers/doc-pages.js';

/**
 * The console examples of docs/graphql.md and docs/events.md, run as printed against a fresh
 * server (test/helpers/doc-pages.ts; the convention: docs/development.md#the-documentation-examples).
 */
describeDocPages('graphql-events');
