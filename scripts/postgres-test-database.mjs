// The PostgreSQL database the test suite runs on, and the check made before any test touches it:
// the server answers, it is PostgreSQL, and the database is a test database — it holds no tables
// but the suite's own (in schemas named rg_t_*, which each test makes and drops), so a URL that
// names a database with real data in it is refused before a test makes a schema there.
// Used by scripts/test-postgres.mjs, test/global-setup.ts and the chaos suite.
import pg from 'pg';

/** The default, when RESTGRAPH_TEST_POSTGRES_URL is not set: the database `test` on the local server. */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** RESTGRAPH_TEST_POSTGRES_URL, or the default. */
export function testPostgresUrl() {
  return process.env.RESTGRAPH_TEST_POSTGRES_URL || DEFAULT_TEST_POSTGRES_URL;
}

/** A URL as it may be shown: without its user's password. */
export function shownUrl(url) {
  return url.replace(/\/\/([^@/:]*)(:[^@/]*)?@/, '//$1@');
}

const SET_IT = 'set RESTGRAPH_TEST_POSTGRES_URL to the URL of a database for the tests (docs/development.md)';

/**
 * undefined when the suite may run on the database at `url`; otherwise `{ reachable, message }`,
 * the message one line that says what is wrong and how to fix it. `reachable` is false when the
 * server did not answer (the PostgreSQL pass may be skipped), true when it answered and the
 * database is refused (the pass must fail).
 */
export async function testDatabaseProblem(url = testPostgresUrl()) {
  const shown = shownUrl(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message || error.constructor.name : String(error);
    if (error instanceof Error && 'code' in error && error.code === '3D000') {
      const name = new URL(url).pathname.slice(1);
      return { reachable: false, message: `PostgreSQL at ${shown} has no database "${name}": create it (createdb ${name}, as .ci/run does), or ${SET_IT}.` };
    }
    return { reachable: false, message: `PostgreSQL at ${shown} is not reachable (${reason}): start it (.ci/run shows how), or ${SET_IT}.` };
  }
  try {
    const { rows } = await client.query('select version() as version, current_database() as database');
    const { version, database } = rows[0];
    if (!String(version).startsWith('PostgreSQL ')) {
      return { reachable: true, message: `the server at ${shown} is not PostgreSQL (it says "${String(version).slice(0, 60)}"): ${SET_IT}.` };
    }
    // Tables, views and sequences outside the suite's schemas, save those an extension made (PostGIS's spatial_ref_sys …).
    const { rows: foreign } = await client.query(
      `select n.nspname as schema, c.relname as name, count(*) over () as total
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
          and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%' and n.nspname not like 'rg\\_t\\_%'
          and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
        order by 1, 2 limit 3`,
    );
    if (foreign.length > 0) {
      const named = foreign.map((row) => `${row.schema}.${row.name}`).join(', ');
      const more = Number(foreign[0].total) > foreign.length ? ` and ${Number(foreign[0].total) - foreign.length} more` : '';
      return {
        reachable: true,
        message:
          `the database "${database}" at ${shown} holds tables that are not the test suite's (${named}${more}), so it is not a test database: ` +
          'create an empty database for the tests (createdb restgraph_test) and set RESTGRAPH_TEST_POSTGRES_URL to its URL (docs/development.md).',
      };
    }
    return undefined;
  } catch (error) {
    return { reachable: true, message: `checking the test database at ${shown} failed (${error instanceof Error ? error.message : String(error)}): ${SET_IT}.` };
  } finally {
    await client.end().catch(() => undefined);
  }
}
