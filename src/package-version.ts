import { readFileSync } from 'node:fs';

/** restgraph's version, from its package.json (the same file from src/ and from dist/). */
export const PACKAGE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
