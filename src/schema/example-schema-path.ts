import { fileURLToPath } from 'node:url';

/**
 * The schema `restgraph serve` serves when none is given: users, posts, products, orders. (A
 * module of its own, so the CLI can name it without loading the schema compiler.)
 */
export const EXAMPLE_SCHEMA_PATH = fileURLToPath(new URL('../../examples/example-schema.yaml', import.meta.url));
