import BetterSqlite3 from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { loadSchemaFile, parseSchemaText } from '../src/schema/load-schema.js';
import type { SchemaModel } from '../src/schema/schema-model.js';
import { CLI_TEST_TIMEOUT_MS, finish, itWithFolder, startCli, type CliFolder } from './helpers/cli-process.js';
import { TEST_DIALECT, TEST_POSTGRES_URL } from './helpers/test-database.js';

/**
 * `restgraph init --from <database-url>` over the film-rental sample (examples/film-rental), on the
 * suite's database: the schema it writes loads and maps the tables, keys, types and foreign keys as
 * docs/existing-database.md says; the database is byte-for-byte the same after init and after a
 * refused `migrate` (pg_dump --schema-only; SQLite: the whole file).
 */

const it = itWithFolder('rg-init-from-db-');
const SAMPLE = new URL('../examples/film-rental/', import.meta.url);
const onPostgres = TEST_DIALECT === 'postgres';
const pgSchema = `rg_t_init_${randomBytes(4).toString('hex')}`;

/** The database as a text to compare: pg_dump of the schema, or the SQLite file's digest and its sqlite_master. */
function snapshot(file: string | undefined): string {
  // pg_dump's \restrict key is new in each dump (pg_dump 15.14 and later): not part of the database.
  if (file === undefined) return execFileSync('pg_dump', ['--schema-only', `--schema=${pgSchema}`, TEST_POSTGRES_URL], { encoding: 'utf8' }).replace(/^\\(un)?restrict .*$/gm, '');
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const schema = (db.prepare('select type, name, sql from sqlite_master order by name').all() as { sql: string | null }[]).map((r) => JSON.stringify(r)).join('\n');
    return `${createHash('sha256').update(readFileSync(file)).digest('hex')}\n${schema}`;
  } finally {
    db.close();
  }
}

/** The sample loaded into a SQLite file of the test's folder: its URL and file. */
function sqliteSample(folder: CliFolder): { url: string; file: string } {
  const file = join(folder.path, 'film-rental.db');
  const db = new BetterSqlite3(file);
  db.exec(readFileSync(new URL('sqlite.sql', SAMPLE), 'utf8'));
  db.close();
  return { url: `sqlite:${file}`, file };
}

async function runCli(folder: CliFolder, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return finish(startCli(folder.path, args, {}, folder.children));
}

describe('restgraph init --from <database-url>', () => {
  beforeAll(async () => {
    if (!onPostgres) return;
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`create schema ${pgSchema}; set search_path to ${pgSchema};\n${readFileSync(new URL('postgres.sql', SAMPLE), 'utf8')}`);
    } finally {
      await client.end();
    }
  });
  afterAll(async () => {
    if (!onPostgres) return;
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    await client.query(`drop schema if exists ${pgSchema} cascade`).finally(() => client.end());
  });

  it(
    'writes a schema that loads and maps every table, key, type and foreign key, without changing the database',
    async ({ folder }) => {
      const sqlite = onPostgres ? undefined : sqliteSample(folder);
      const url = sqlite?.url ?? TEST_POSTGRES_URL;
      const before = snapshot(sqlite?.file);
      const output = join(folder.path, 'film-rental.yaml');
      const init = await runCli(folder, ['init', '--from', url, ...(onPostgres ? ['--schema', pgSchema] : []), '-o', output]);
      expect(init.stderr).toContain('rental_log has no primary key: served read-only');
      expect(init.code).toBe(0);
      expect(init.stdout).toContain('12 resources');
      expect(snapshot(sqlite?.file)).toBe(before);

      const text = readFileSync(output, 'utf8');
      const where = onPostgres ? `${pgSchema}.` : '';
      // The type as the database writes it: SQLite keeps the declared type's spelling.
      expect(text).toContain(`# from ${where}rental.customer_id, ${onPostgres ? 'integer' : 'INTEGER'}, NOT NULL, FK → customer ON DELETE RESTRICT\n`);
      expect(text).toContain(`# from ${where}film_actor (table), primary key (actor_id, film_id)\n`);
      const schema = loadSchemaFile(output);
      expectMapping(schema);

      // migrate refuses it before opening the database: no table of the user's changes.
      // On PostgreSQL in the sample's schema, where restgraph would make its own tables.
      const migrateUrl = onPostgres ? `${TEST_POSTGRES_URL}${TEST_POSTGRES_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${pgSchema}`)}` : url;
      const migrate = await runCli(folder, ['migrate', output, '-d', migrateUrl]);
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toContain('[RG_MAPPED_SCHEMA_NOT_SERVED]');
      expect(snapshot(sqlite?.file)).toBe(before);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    '--tables reads only the tables named, and makes no relation to a table left out',
    async ({ folder }) => {
      const sqlite = onPostgres ? undefined : sqliteSample(folder);
      const output = join(folder.path, 'two.yaml');
      const init = await runCli(folder, ['init', '--from', sqlite?.url ?? TEST_POSTGRES_URL, ...(onPostgres ? ['--schema', pgSchema] : []), '--tables', 'rental,customer', '-o', output]);
      expect(init.code).toBe(0);
      const schema = loadSchemaFile(output);
      expect([...schema.resources.keys()].sort()).toEqual(['customer', 'rental']);
      expect(init.stderr).toContain('rental (inventory_id) references inventory, which is not read: no relation made');
      expect([...(schema.resources.get('rental')?.relations.keys() ?? [])]).toEqual(['customer']);
      const missing = await runCli(folder, ['init', '--from', sqlite?.url ?? TEST_POSTGRES_URL, ...(onPostgres ? ['--schema', pgSchema] : []), '--tables', 'films', '-o', join(folder.path, 'x.yaml')]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('no table or view "films"');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    '--update adds the tables, columns and foreign keys the file lacks, keeping its edits',
    async ({ folder }) => {
      const sqlite = onPostgres ? undefined : sqliteSample(folder);
      const from = ['--from', sqlite?.url ?? TEST_POSTGRES_URL, ...(onPostgres ? ['--schema', pgSchema] : [])];
      const file = join(folder.path, 'edited.yaml');
      expect((await runCli(folder, ['init', ...from, '--tables', 'rental,customer', '-o', file])).code).toBe(0);
      const written = readFileSync(file, 'utf8');
      const edited = written
        .replace('  customer:\n', '  # Our customers, edited by hand.\n  customer:\n    description: People who rent films.\n    access: { read: public }\n')
        .replace(/\n {6}first_name:\n/, '\n      firstName:\n        column: first_name\n');
      expect(edited).not.toBe(written);
      writeFileSync(file, edited);
      const before = snapshot(sqlite?.file);

      const update = await runCli(folder, ['init', ...from, '--update', file]);
      expect(update.stderr).toBe(update.stderr.split('\n').filter((line) => line === '' || line.startsWith('warning: ')).join('\n'));
      expect(update.code).toBe(0);
      expect(update.stdout).toContain('added resource actor');
      expect(snapshot(sqlite?.file)).toBe(before);
      const text = readFileSync(file, 'utf8');
      expect(text).toContain('# Our customers, edited by hand.\n  customer:\n    description: People who rent films.\n');
      const schema = loadSchemaFile(file);
      expectMapping(schema, { renamedFirstName: true });
      expect(schema.resources.get('customer')?.access.read).toEqual({ kind: 'public' });

      // Run again: nothing is left to add, and the file is not rewritten.
      const again = await runCli(folder, ['init', ...from, '--update', file]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('already maps every table and column');
      expect(readFileSync(file, 'utf8')).toBe(text);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

function expectMapping(schema: SchemaModel, edits: { renamedFirstName?: boolean } = {}): void {
  const mapping = schema.mapping;
  expect(mapping).toBeDefined();
  const resource = (name: string) => {
    const found = mapping?.resources.get(name);
    if (found === undefined) throw new Error(`no mapping of ${name}`);
    return found;
  };
  const field = (resourceName: string, name: string) => schema.resources.get(resourceName)?.fields.get(name);
  expect([...schema.resources.keys()].sort()).toEqual(['actor', 'actor_award', 'country', 'customer', 'film', 'film_actor', 'film_list', 'inventory', 'language', 'payment', 'rental', 'rental_log']);
  // No restgraph columns on mapped tables.
  expect(field('customer', 'id')).toBeUndefined();
  expect(field('customer', 'createdAt')).toBeUndefined();

  // Keys: integer identity, natural text key, uuid with a database default, composite.
  expect(resource('customer').key).toEqual(['customer_id']);
  expect(resource('customer').generated.get('customer_id')).toBe('byDefault');
  expect(resource('country').key).toEqual(['country_code']);
  expect(field('country', 'country_code')).toMatchObject({ type: 'string', maxLength: 2, required: true });
  expect(resource('rental').key).toEqual(['rental_id']);
  expect(field('rental', 'rental_id')).toMatchObject({ type: 'string', format: 'uuid', generated: 'byDefault', required: false });
  expect(resource('film_actor').key).toEqual(['actor_id', 'film_id']);
  expect(resource('film_list').readOnly).toBe(true);
  expect(resource('rental_log')).toMatchObject({ readOnly: true, key: [] });

  // Types.
  expect(field('film', 'replacement_cost')).toMatchObject({ type: 'decimal', precision: 20, scale: 2, required: true });
  expect(field('film', 'view_count')).toMatchObject({ type: 'integer', format: 'int64', generated: 'byDefault' });
  expect(field('film', 'rating')).toMatchObject({ type: 'enum', values: ['G', 'PG', 'PG-13', 'R', 'NC-17'] });
  expect(field('film', 'metadata')?.type).toBe('json');
  // A PostgreSQL array column is read and written as a JSON array (format: array); SQLite's is a json column.
  expect(field('film', 'special_features')).toMatchObject(onPostgres ? { type: 'json', format: 'array' } : { type: 'json' });
  expect(field('film', 'poster')).toMatchObject({ type: 'string', format: 'base64' });
  expect(field('film', 'last_update')).toMatchObject({ type: 'datetime', generated: 'byDefault', required: false });
  expect(field('payment', 'paid_on')?.type).toBe('date');
  expect(field('payment', 'paid_at')?.type).toBe('time');
  expect(field('customer', 'email')).toMatchObject({ unique: true, required: false });
  if (edits.renamedFirstName === true) {
    expect(field('customer', 'first_name')).toBeUndefined();
    expect(resource('customer').columns.get('firstName')).toBe('first_name');
  } else {
    expect(field('customer', 'first_name')).toMatchObject({ type: 'string', maxLength: 45, required: true });
  }
  expect(field('rental', 'customer_id')).toMatchObject({ type: 'integer', required: true, index: true });
  // A column GraphQL cannot name is mapped.
  expect(field('film', '_3d')).toMatchObject({ type: 'boolean', column: '3d' });
  expect(resource('film').columns.get('_3d')).toBe('3d');
  if (onPostgres) {
    expect(field('language', 'language_id')).toMatchObject({ generated: 'always' });
    expect(field('film', 'running_time')).toMatchObject({ type: 'string' });
  }

  // Foreign keys, both ways, a composite one too, with the database's ON DELETE.
  expect(resource('rental').relations.get('customer')).toMatchObject({ kind: 'belongsTo', target: 'customer', fields: ['customer_id'], targetFields: ['customer_id'], onDelete: 'restrict' });
  expect(resource('customer').relations.get('rentals')).toMatchObject({ kind: 'hasMany', target: 'rental', fields: ['customer_id'] });
  expect(resource('customer').relations.get('country')).toMatchObject({ fields: ['country_code'], targetFields: ['country_code'], onDelete: 'setNull' });
  expect(resource('actor_award').relations.get('film_actor')).toMatchObject({
    kind: 'belongsTo',
    fields: ['actor_id', 'film_id'],
    targetFields: ['actor_id', 'film_id'],
    onDelete: 'cascade',
  });
  expect(resource('film_actor').relations.get('actor_awards')).toMatchObject({ kind: 'hasMany', target: 'actor_award', fields: ['actor_id', 'film_id'] });
  expect(resource('rental').plural).toBe('rentals');
}

describe('the mapped vocabulary', () => {
  it('is refused in a schema that does not map an existing database', () => {
    expect(() => parseSchemaText('resources:\n  notes:\n    table: note\n    fields:\n      body: { type: decimal }\n')).toThrow(/"table" is for schemas that map an existing database[\s\S]*type decimal is for schemas/);
  });

  it('checks keys and composite foreign keys against the fields', () => {
    const text = [
      'database: { existing: true }',
      'resources:',
      '  film_actor:',
      '    key: [actor_id, film_idd]',
      '    fields: { actor_id: { type: integer }, film_id: { type: integer } }',
      '  award:',
      '    key: [award_id]',
      '    fields: { award_id: { type: integer }, actor_id: { type: integer } }',
      '    relations:',
      '      film_actor: { belongsTo: film_actor, foreignKey: [actor_id] }',
      '  log:',
      '    fields: { line: { type: string } }',
    ].join('\n');
    expect(() => parseSchemaText(text)).toThrow(/film_actor has no field "film_idd"[\s\S]*1 foreign key field for the 2 of film_actor[\s\S]*log has no key/);
  });
});
