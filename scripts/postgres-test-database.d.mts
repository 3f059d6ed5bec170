/** The default, when RESTGRAPH_TEST_POSTGRES_URL is not set: the database `test` on the local server. */
export const DEFAULT_TEST_POSTGRES_URL: string;
/** RESTGRAPH_TEST_POSTGRES_URL, or the default. */
export function testPostgresUrl(): string;
/** A URL as it may be shown: without its user's password. */
export function shownUrl(url: string): string;
/**
 * undefined when the suite may run on the database at `url`; otherwise what is wrong, in one line
 * with its fix, and whether the server answered (false: the PostgreSQL pass may be skipped).
 */
export function testDatabaseProblem(url?: string): Promise<{ reachable: boolean; message: string } | undefined>;
