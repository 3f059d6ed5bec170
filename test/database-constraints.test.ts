import BetterSqlite3 from 'better-sqlite3';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { parseSchemaText } from '../src/schema/load-schema.js';
import { graphql, onlyError } from './helpers/graphql-request.js';
import { actAsAdmin, checkEveryResponse, discardLogs, json, TEST_ADMIN_TOKEN, tempDir } from './helpers/test-app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from './helpers/test-database.js';

/**
 * Constraints restgraph did not declare, added by hand to its tables by a team that owns the
 * database (a CHECK, a composite unique index, a foreign key, NOT NULL, an exclusion constraint, a
 * trigger that refuses rows): a write they refuse is the client's 409 or 422 naming the fields and
 * the constraint, never a 500, on REST and GraphQL; it leaves the other writes of its group alone.
 */

const SCHEMA = parseSchemaText(
  [
    'resources:',
    '  categories:',
    '    access: { read: public, write: public }',
    '    fields:',
    '      name: { type: string, required: true }',
    '  products:',
    '    access: { read: public, write: public }',
    '    fields:',
    '      name:       { type: string, required: true }',
    '      sku:        { type: string }',
    '      warehouse:  { type: string }',
    '      shelf:      { type: string }',
    '      price:      { type: integer }',
    '      categoryId: { type: integer }',
    '      note:       { type: string }',
    '',
  ].join('\n'),
);

type Detail = { pointer?: string; detail: string; constraint?: string };
type Problem = { code: string; status: number; detail: string; errors?: Detail[] };

let db: TestDatabase;
let app: FastifyInstance;
const dir = tempDir();
const undoes: (() => Promise<void>)[] = [];

async function start(): Promise<FastifyInstance> {
  return actAsAdmin(await buildApp({ databaseUrl: db.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, schema: SCHEMA }));
}

/**
 * The constraints, added after restgraph made the tables. PostgreSQL with ALTER TABLE; SQLite,
 * which cannot add a CHECK, NOT NULL or FOREIGN KEY to a table, by rebuilding the table the way
 * its documentation says (https://www.sqlite.org/lang_altertable.html#otheralter).
 */
async function addConstraints(): Promise<void> {
  if (db.dialect === 'postgres') {
    for (const sql of [
      'alter table "products" add constraint "price_positive" check ("price" > 0)',
      'create unique index "shelf_slot" on "products" ("warehouse", "shelf")',
      'alter table "products" add constraint "products_category_fk" foreign key ("categoryId") references "categories" ("id")',
      'alter table "products" alter column "note" set default \'none\'',
      'alter table "products" alter column "note" set not null',
      'alter table "products" add constraint "one_sku" exclude using hash ("sku" with =)',
      'create table "stock" ("productId" bigint not null references "products" ("id") on delete restrict, "quantity" integer)',
      `create function "refuse_secret"() returns trigger language plpgsql as $$ begin if new."name" = 'secret' then raise exception 'products cannot be called secret'; end if; return new; end $$`,
      'create trigger "no_secret" before insert or update on "products" for each row execute function "refuse_secret"()',
    ]) {
      await db.run(sql);
    }
    return;
  }
  const [table] = await db.query<{ sql: string }>("select sql from sqlite_master where type = 'table' and name = 'products'");
  const indexes = await db.query<{ sql: string }>("select sql from sqlite_master where type = 'index' and tbl_name = 'products' and sql is not null");
  const ddl = (table?.sql ?? '')
    .replace(/^CREATE TABLE\s+"?products"?/i, 'CREATE TABLE "products_new"')
    .replace(/"note"\s+text/i, '"note" text not null default \'none\'')
    .replace(/\)\s*$/, ', constraint "price_positive" check ("price" > 0), check ("price" < 1000000), constraint "products_category_fk" foreign key ("categoryId") references "categories" ("id"))');
  const sqlite = new BetterSqlite3(db.file ?? '');
  sqlite.exec(
    [
    'pragma foreign_keys = off',
    'begin',
    ddl,
    'insert into "products_new" select * from "products"',
    'drop table "products"',
    'alter table "products_new" rename to "products"',
    ...indexes.map((i) => i.sql),
    'create unique index "shelf_slot" on "products" ("warehouse", "shelf")',
    'create table "stock" ("productId" integer not null references "products" ("id") on delete restrict, "quantity" integer)',
    `create trigger "no_secret" before insert on "products" when new."name" = 'secret' begin select raise(abort, 'products cannot be called secret'); end`,
    'commit',
    ].join(';\n'),
  );
  sqlite.close();
}

beforeAll(async () => {
  db = await createTestDatabase(dir.path);
  const testDb = db;
  undoes.push(() => testDb.drop());
  const first = await start();
  await first.close();
  await addConstraints();
  app = await start();
  const started = app;
  undoes.push(() => started.close());
  // Every answer must be one the OpenAPI document describes (status, code, problem members).
  await checkEveryResponse(app);
  await post('/categories', { name: 'Tools' }, 201);
  await post('/products', { name: 'Hammer', sku: 'H-1', warehouse: 'north', shelf: 'A1', price: 10, categoryId: 1, note: 'x' }, 201);
  await db.run('insert into "stock" ("productId", "quantity") values (1, 5)');
});

afterAll(async () => {
  // What beforeAll got to, in reverse: the app, then its database.
  for (const undo of undoes.reverse()) await undo();
  dir.cleanup();
});

async function send(method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return app.inject({ method, url, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }) });
}

async function post(url: string, body: unknown, status: number): Promise<Record<string, unknown>> {
  const response = await send('POST', url, body);
  expect(response.statusCode, response.body).toBe(status);
  return json(response);
}

function problem(response: LightMyRequestResponse, status: number, code: string): Problem {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  const body = json<Problem>(response);
  expect(body.code).toBe(code);
  return body;
}

const hammer = { name: 'Hammer 2', sku: 'H-2', warehouse: 'south', shelf: 'B1', price: 10, categoryId: 1, note: 'x' };

describe('a constraint added by hand', () => {
  it('composite unique index: 409 naming both fields and the index, not the other row', async () => {
    const body = problem(await send('POST', '/products', { ...hammer, warehouse: 'north', shelf: 'A1' }), 409, 'unique-conflict');
    expect(body.errors).toEqual([
      { pointer: '/warehouse', detail: 'is already used by another product together with shelf', constraint: 'shelf_slot' },
      { pointer: '/shelf', detail: 'is already used by another product together with warehouse', constraint: 'shelf_slot' },
    ]);
    expect(body.detail).toBe('Another product already has this warehouse and shelf.');
    expect(JSON.stringify(body)).not.toContain('Hammer');
    const other = await post('/products', { ...hammer, sku: 'H-3', shelf: 'C1' }, 201);
    const moved = problem(await send('PATCH', `/products/${String(other.id)}`, { shelf: 'A1', warehouse: 'north' }), 409, 'unique-conflict');
    expect(moved.errors?.map((e) => e.pointer)).toEqual(['/warehouse', '/shelf']);
  });

  it('CHECK: 422 naming the constraint, its field and its expression, never the row', async () => {
    for (const [method, url] of [['POST', '/products'], ['PATCH', '/products/1'], ['PUT', '/products/1']] as const) {
      const body = problem(await send(method, url, { ...hammer, price: -5 }), 422, 'validation-failed');
      expect(body.errors).toHaveLength(1);
      expect(body.errors?.[0]).toMatchObject({ pointer: '/price', constraint: 'price_positive' });
      // The expression as the database keeps it: PostgreSQL prints its own form, SQLite keeps the text.
      expect(body.errors?.[0]?.detail).toBe(`breaks check constraint price_positive: ${TEST_DIALECT === 'postgres' ? '(price > 0)' : '"price" > 0'}`);
      expect(JSON.stringify(body)).not.toContain('Hammer');
    }
  });

  it.skipIf(TEST_DIALECT !== 'sqlite')('an unnamed CHECK (SQLite names it by its expression, cut short): 422 naming the field and the whole expression', async () => {
    const body = problem(await send('PATCH', '/products/1', { price: 2_000_000 }), 422, 'validation-failed');
    expect(body.errors).toEqual([{ pointer: '/price', detail: 'breaks check constraint: "price" < 1000000' }]);
  });

  it('NOT NULL: 422 naming the field', async () => {
    const body = problem(await send('PATCH', '/products/1', { note: null }), 422, 'validation-failed');
    expect(body.errors).toEqual([{ pointer: '/note', detail: 'cannot be null (the database requires a value)' }]);
  });

  it('FOREIGN KEY on a write: 422 naming the field that refers to no row', async () => {
    const body = problem(await send('POST', '/products', { ...hammer, categoryId: 99 }), 422, 'validation-failed');
    // SQLite keeps no name for a foreign key.
    const constraint = TEST_DIALECT === 'postgres' ? { constraint: 'products_category_fk' } : {};
    expect(body.errors).toEqual([{ pointer: '/categoryId', detail: 'refers to a row of categories that does not exist', ...constraint }]);
  });

  it('FOREIGN KEY on a delete (RESTRICT): 409 naming the table and columns that still refer to the row', async () => {
    const body = problem(await send('DELETE', '/products/1'), 409, 'reference-conflict');
    expect(body.errors?.map((e) => e.detail)).toEqual(['rows of stock refer to it through productId']);
    expect(body.detail).toBe('Product 1 is still referenced by stock (productId); delete those first.');
    const category = problem(await send('DELETE', '/categories/1'), 409, 'reference-conflict');
    expect(category.errors?.map((e) => e.detail)).toEqual(['rows of products refer to it through categoryId']);
  });

  it('a trigger that refuses the row: 422 with the message it raised', async () => {
    const body = problem(await send('POST', '/products', { ...hammer, name: 'secret' }), 422, 'validation-failed');
    expect(body.detail).toBe('The database refused the row: products cannot be called secret');
  });

  it.skipIf(TEST_DIALECT !== 'postgres')('exclusion constraint: 409 naming the field and the constraint, without the other row\'s value', async () => {
    await db.run('drop index "shelf_slot"');
    try {
      const body = problem(await send('POST', '/products', { ...hammer, sku: 'H-1', shelf: 'Z9' }), 409, 'exclusion-conflict');
      expect(body.errors).toEqual([{ pointer: '/sku', detail: 'conflicts with another product (exclusion constraint one_sku)', constraint: 'one_sku' }]);
    } finally {
      await db.run('create unique index "shelf_slot" on "products" ("warehouse", "shelf")');
    }
  });

  it('GraphQL: the same codes and problems in extensions', async () => {
    const unique = onlyError(await graphql(app, 'mutation { createProduct(input: { name: "G", warehouse: "north", shelf: "A1", price: 1, categoryId: 1, note: "x" }) { id } }'), 'unique-conflict');
    expect(unique.extensions.errors?.map((e) => e.pointer)).toEqual(['/warehouse', '/shelf']);
    const check = onlyError(await graphql(app, 'mutation { updateProduct(id: "1", input: { price: -1 }) { id } }'), 'validation-failed');
    expect(check.extensions.errors?.[0]).toMatchObject({ pointer: '/price', constraint: 'price_positive' });
    const restrict = onlyError(await graphql(app, 'mutation { deleteProduct(id: "1") }'), 'reference-conflict');
    expect(restrict.extensions.status).toBe(409);
  });

  it('writes of one group commit: the one that breaks a constraint fails alone, the others are stored', async () => {
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) => send('POST', '/products', { ...hammer, sku: `G-${i}`, shelf: `G${i}`, price: i === 3 ? -1 : 5 })),
    );
    expect(replies.map((r) => r.statusCode)).toEqual([201, 201, 201, 422, 201, 201]);
    const stored = await db.query<{ sku: string }>('select "sku" from "products" where "sku" like ? order by "sku"', ['G-%']);
    expect(stored.map((r) => r.sku)).toEqual(['G-0', 'G-1', 'G-2', 'G-4', 'G-5']);
  });
});
