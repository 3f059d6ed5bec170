import BetterSqlite3 from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { catalogSchema } from '../../src/schema/catalog-schema.js';
import { parseSchemaText } from '../../src/schema/load-schema.js';
import { mappedSchemaText } from '../../src/schema/mapped-schema-text.js';
import type { SchemaModel } from '../../src/schema/schema-model.js';
import { readDatabaseCatalog } from '../../src/store/open-database.js';
import { createTestDatabase, TEST_POSTGRES_URL, type TestDatabase } from './test-database.js';

/**
 * The film-rental sample (examples/film-rental) in a database of the suite's kind, the schema
 * `restgraph init --from` writes for it, and (PostgreSQL) a system schema of the test's own in
 * place of `restgraph`, for the capture tests.
 */
export interface CaptureSample {
  database: TestDatabase;
  /** The mapped schema's text and model. */
  schemaText: string;
  schema: SchemaModel;
  /** PostgreSQL: the schema of the sample's tables; undefined on SQLite. */
  databaseSchema: string | undefined;
  /** PostgreSQL: the system schema (RESTGRAPH_SYSTEM_SCHEMA); on SQLite unused. */
  systemSchema: string;
  /** The URL restgraph's own connections use: PostgreSQL with the system schema first on the search_path. */
  restgraphUrl: string;
  /** A change made by another program: its own connection, without restgraph's settings. */
  outside(sql: string, parameters?: readonly unknown[]): Promise<void>;
  drop(): Promise<void>;
}

const SAMPLE = new URL('../../examples/film-rental/', import.meta.url);

/** `extraSql`: more tables, created after the sample's (before the schema is read), in SQL both databases take. */
export async function createCaptureSample(dir: string, extraSql = ''): Promise<CaptureSample> {
  const database = await createTestDatabase(dir, 'films');
  const onPostgres = database.dialect === 'postgres';
  const databaseSchema = onPostgres ? (await database.query<{ s: string }>('select current_schema() as s'))[0]?.s : undefined;
  const systemSchema = `rg_t_sys_${randomBytes(5).toString('hex')}`;
  if (onPostgres) await database.run(`${readFileSync(new URL('postgres.sql', SAMPLE), 'utf8')}\n${extraSql}`);
  else {
    const db = new BetterSqlite3(database.file ?? '');
    db.exec(`${readFileSync(new URL('sqlite.sql', SAMPLE), 'utf8')}\n${extraSql}`);
    db.close();
  }
  const catalog = await readDatabaseCatalog(database.url, databaseSchema === undefined ? {} : { schema: databaseSchema });
  const schemaText = mappedSchemaText(catalogSchema(catalog), ['the film-rental sample']);
  const separator = TEST_POSTGRES_URL.includes('?') ? '&' : '?';
  return {
    database,
    schemaText,
    schema: parseSchemaText(schemaText),
    databaseSchema,
    systemSchema,
    restgraphUrl: onPostgres ? `${TEST_POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${systemSchema}`)}` : database.url,
    async outside(sql, parameters = []) {
      if (!onPostgres) {
        const db = new BetterSqlite3(database.file ?? '');
        try {
          db.prepare(sql).run(...parameters);
        } finally {
          db.close();
        }
        return;
      }
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        let n = 0;
        await client.query(sql.replace(/\?/g, () => `$${++n}`), [...parameters]);
      } finally {
        await client.end();
      }
    },
    async drop() {
      await database.drop();
      if (!onPostgres) return;
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      await client.query(`drop schema if exists "${systemSchema}" cascade`).finally(() => client.end());
    },
  };
}
