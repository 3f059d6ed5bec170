import BetterSqlite3 from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { runInitFromDatabase } from '../src/cli/init-from-database.js';
import { captureLogs, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { runOnTestPostgres, TEST_DIALECT, TEST_POSTGRES_URL } from './helpers/test-database.js';

/**
 * Serving a database restgraph did not create (docs/existing-database.md): the film-rental sample
 * (examples/film-rental) mapped by `init --from`'s own code, served through the app, its tables
 * addressed by their keys (integer, text, uuid, composite), and not one of its tables, columns,
 * keys or indexes changed by serving, writing and starting again.
 */

const SAMPLE = new URL('../examples/film-rental/', import.meta.url);
const onPostgres = TEST_DIALECT === 'postgres';
const tag = randomBytes(4).toString('hex');
const pgSchema = `rg_t_serve_${tag}`;
const systemSchema = `rg_t_serve_${tag}_system`;
const folder = tempDir('rg-serve-mapped-');
const sqliteFile = join(folder.path, 'film-rental.db');
const url = onPostgres ? TEST_POSTGRES_URL : `sqlite:${sqliteFile}`;
const schemaFile = join(folder.path, 'film-rental.yaml');


/** A table beside the sample's: a composite key of text parts, which may hold the `,` that separates parts in a path. */
const TAG_LINK = 'create table tag_link (kind text not null, name text not null, note text, primary key (kind, name))';

/** The user's tables as the database describes them: pg_dump of their schema, or SQLite's own text of everything but restgraph's tables. */
function userTables(): string {
  if (onPostgres) return execFileSync('pg_dump', ['--schema-only', `--schema=${pgSchema}`, TEST_POSTGRES_URL], { encoding: 'utf8' }).replace(/^\\(un)?restrict .*$/gm, '');
  const db = new BetterSqlite3(sqliteFile, { readonly: true });
  try {
    const rows = db.prepare("select type, name, tbl_name, sql from sqlite_master where tbl_name not like '\\_restgraph\\_%' escape '\\' and name not like 'sqlite_%' order by name").all();
    return rows.map((r) => JSON.stringify(r)).join('\n');
  } finally {
    db.close();
  }
}

/** Rows of restgraph's own tables, read as an operator would (they are not served). */
async function systemQuery(sql: string): Promise<Record<string, unknown>[]> {
  if (!onPostgres) {
    const db = new BetterSqlite3(sqliteFile, { readonly: true });
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

async function start(file = schemaFile): Promise<{ app: FastifyInstance; logs: Record<string, unknown>[] }> {
  const { logs, logDestination } = captureLogs();
  const app = await buildApp({ schema: file, databaseUrl: url, systemSchema, logDestination, adminToken: TEST_ADMIN_TOKEN });
  return { app, logs };
}

function send(app: FastifyInstance, options: InjectOptions): Promise<LightMyRequestResponse> {
  return app.inject({ ...options, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...options.headers } });
}

describe('serving a mapped database', () => {
  let app: FastifyInstance;
  let logs: Record<string, unknown>[];
  let before: string;

  beforeAll(async () => {
    if (onPostgres) {
      await runOnTestPostgres(`create schema ${pgSchema}; set search_path to ${pgSchema};\n${readFileSync(new URL('postgres.sql', SAMPLE), 'utf8')};\n${TAG_LINK}`);
    } else {
      const db = new BetterSqlite3(sqliteFile);
      db.exec(`${readFileSync(new URL('sqlite.sql', SAMPLE), 'utf8')};\n${TAG_LINK}`);
      db.close();
    }
    const print = console.log;
    console.log = () => undefined;
    try {
      await runInitFromDatabase({ from: url, output: schemaFile, ...(onPostgres ? { schema: pgSchema } : {}) });
    } finally {
      console.log = print;
    }
    // Everyone may read and write: the access rules are not what this tests.
    writeFileSync(schemaFile, readFileSync(schemaFile, 'utf8').replace(/^ {4}key: /gm, '    access: { read: public, write: public }\n    key: '));
    before = userTables();
    ({ app, logs } = await start());
  });

  afterAll(async () => {
    await app.close();
    if (onPostgres) await runOnTestPostgres(`drop schema if exists ${pgSchema} cascade; drop schema if exists ${systemSchema} cascade`);
    folder.cleanup();
  });

  it('warns of no column and creates, reads, updates and deletes rows of a table with an identity key', async () => {
    expect(logs.filter((l) => String(l.msg).includes('not in the schema'))).toEqual([]);
    const created = await send(app, { method: 'POST', url: '/actor', payload: { first_name: 'Penelope', last_name: 'Guiness' } });
    expect(created.statusCode).toBe(201);
    const actor = created.json<{ actor_id: number; first_name: string }>();
    expect(Number.isSafeInteger(actor.actor_id)).toBe(true);
    expect(actor).toEqual({ actor_id: actor.actor_id, first_name: 'Penelope', last_name: 'Guiness' });
    expect(created.headers.location).toBe(`/actor/${actor.actor_id}`);
    const read = await send(app, { method: 'GET', url: `/actor/${actor.actor_id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(actor);

    // ETags from the row's content: If-None-Match answers 304, a stale If-Match 412.
    const etag = String(read.headers.etag);
    expect((await send(app, { method: 'GET', url: `/actor/${actor.actor_id}`, headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    const patched = await send(app, { method: 'PATCH', url: `/actor/${actor.actor_id}`, headers: { 'if-match': etag }, payload: { first_name: 'Nick' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({ ...actor, first_name: 'Nick' });
    expect(patched.headers.etag).not.toBe(etag);
    expect((await send(app, { method: 'PATCH', url: `/actor/${actor.actor_id}`, headers: { 'if-match': etag }, payload: { first_name: 'Ed' } })).statusCode).toBe(412);

    expect((await send(app, { method: 'DELETE', url: `/actor/${actor.actor_id}` })).statusCode).toBe(204);
    expect((await send(app, { method: 'GET', url: `/actor/${actor.actor_id}` })).statusCode).toBe(404);
    expect((await send(app, { method: 'GET', url: '/actor/abc' })).statusCode).toBe(404);
  });

  it('serves a table keyed by text, and includes a belongsTo relation', async () => {
    const fr = await send(app, { method: 'POST', url: '/country', payload: { country_code: 'FR', name: 'France' } });
    expect(fr.statusCode).toBe(201);
    expect(fr.headers.location).toBe('/country/FR');
    expect((await send(app, { method: 'GET', url: '/country/FR' })).json()).toEqual({ country_code: 'FR', name: 'France' });
    expect((await send(app, { method: 'POST', url: '/country', payload: { country_code: 'FR', name: 'Francia' } })).statusCode).toBe(409);
    expect((await send(app, { method: 'GET', url: '/country/XX' })).statusCode).toBe(404);

    const customer = await send(app, { method: 'POST', url: '/customer', payload: { first_name: 'Mary', last_name: 'Smith', email: 'mary@example.com', country_code: 'FR' } });
    expect(customer.statusCode).toBe(201);
    const { customer_id: customerId } = customer.json<{ customer_id: number }>();
    const embedded = await send(app, { method: 'GET', url: `/customer/${customerId}?include=country` });
    expect(embedded.statusCode).toBe(200);
    expect(embedded.json<{ country: unknown }>().country).toEqual({ country_code: 'FR', name: 'France' });
    const related = await send(app, { method: 'GET', url: `/country/FR/customers` });
    expect(related.statusCode).toBe(200);
    expect(related.json<{ customer_id: number }[]>().map((c) => c.customer_id)).toEqual([customerId]);
  });

  it('fills a uuid key the database generates, and addresses the row by it', async () => {
    const language = (await send(app, { method: 'POST', url: '/language', payload: { name: 'English' } })).json<{ language_id: number }>();
    const film = await send(app, { method: 'POST', url: '/film', payload: { title: 'Academy Dinosaur', language_id: language.language_id, replacement_cost: '20.99' } });
    expect(film.statusCode).toBe(201);
    const { film_id: filmId } = film.json<{ film_id: number }>();
    const inventory = (await send(app, { method: 'POST', url: '/inventory', payload: { film_id: filmId, store_code: 'A' } })).json<{ inventory_id: number }>();
    const customer = (await send(app, { method: 'POST', url: '/customer', payload: { first_name: 'Ann', last_name: 'Lee' } })).json<{ customer_id: number }>();
    const rental = await send(app, { method: 'POST', url: '/rental', payload: { inventory_id: inventory.inventory_id, customer_id: customer.customer_id } });
    expect(rental.statusCode).toBe(201);
    const { rental_id: rentalId } = rental.json<{ rental_id: string }>();
    expect(rentalId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(rental.headers.location).toBe(`/rental/${rentalId}`);
    expect((await send(app, { method: 'GET', url: `/rental/${rentalId}` })).json()).toMatchObject({ rental_id: rentalId, customer_id: customer.customer_id });
    // The database's own foreign key refuses deleting a customer with rentals (ON DELETE RESTRICT).
    const refused = await send(app, { method: 'DELETE', url: `/customer/${customer.customer_id}` });
    expect(refused.statusCode, refused.body + JSON.stringify(logs.filter((l) => l.level === 50).slice(-1))).toBe(409);
    expect((await send(app, { method: 'DELETE', url: `/rental/${rentalId}` })).statusCode).toBe(204);
    expect((await send(app, { method: 'GET', url: `/rental/${rentalId}` })).statusCode).toBe(404);
  });

  it('filters and sorts lists on fields named in snake_case, as their columns are', async () => {
    const language = (await send(app, { method: 'POST', url: '/language', payload: { name: 'German' } })).json<{ language_id: number }>();
    const film = await send(app, { method: 'POST', url: '/film', payload: { title: 'Filtered', release_year: 1999, language_id: language.language_id, replacement_cost: '5.00' } });
    const { film_id: filmId } = film.json<{ film_id: number }>();
    const inventory = (await send(app, { method: 'POST', url: '/inventory', payload: { film_id: filmId, store_code: 'F' } })).json<{ inventory_id: number }>();
    const customer = (await send(app, { method: 'POST', url: '/customer', payload: { first_name: 'Fil', last_name: 'Ter' } })).json<{ customer_id: number }>();
    for (const day of ['01', '03', '02']) {
      const rental = await send(app, { method: 'POST', url: '/rental', payload: { inventory_id: inventory.inventory_id, customer_id: customer.customer_id, rented_at: `2026-01-${day}T10:00:00Z` } });
      expect(rental.statusCode, rental.body).toBe(201);
    }
    const rentals = await send(app, { method: 'GET', url: `/rental?customer_id=${customer.customer_id}&sort=-rented_at&limit=2` });
    expect(rentals.statusCode, rentals.body).toBe(200);
    expect(rentals.json<{ rented_at: string }[]>().map((r) => r.rented_at)).toEqual(['2026-01-03T10:00:00.000Z', '2026-01-02T10:00:00.000Z']);
    const films = await send(app, { method: 'GET', url: '/film?release_year[gte]=1999&fields=title' });
    expect(films.statusCode, films.body).toBe(200);
    expect(films.json()).toEqual([{ title: 'Filtered' }]);
    expect((await send(app, { method: 'GET', url: '/inventory?store_code=F&fields=film_id' })).json()).toEqual([{ film_id: filmId }]);

    // Relation paths in a filter join by the tables' own keys (customer_id, film_id), not by an `id`.
    const filtered = async (url: string): Promise<unknown> => {
      const response = await send(app, { method: 'GET', url: encodeURI(url) });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      return response.json();
    };
    expect(await filtered("/rental?filter=customer.last_name = 'Ter'&sort=rented_at&fields=rented_at")).toEqual(
      ['01', '02', '03'].map((day) => ({ rented_at: `2026-01-${day}T10:00:00.000Z` })),
    );
    expect(await filtered("/customer?filter=rentals.any(rented_at >= '2026-01-03T00:00:00Z')&fields=last_name")).toEqual([{ last_name: 'Ter' }]);
    expect(await filtered("/film?filter=inventories.any(rentals.any(customer.last_name = 'Ter'))&fields=title")).toEqual([{ title: 'Filtered' }]);
    expect(await filtered("/rental?filter=inventory.film.title = 'Filtered' and customer.rentals.none(rented_at < '2026-01-01T00:00:00Z')&count=true&fields=customer_id")).toHaveLength(3);
    const composite = await send(app, { method: 'GET', url: encodeURI("/actor_award?filter=film_actor.character_name = 'Hero'") });
    expect(composite.statusCode, composite.body).toBe(400);
    expect(composite.json<{ detail: string }>().detail).toContain('"film_actor" at 0 is a relation of a composite foreign key');
  });

  it('addresses rows of a composite key by their parts in key order, and pages over the key', async () => {
    const language = (await send(app, { method: 'POST', url: '/language', payload: { name: 'French' } })).json<{ language_id: number }>();
    const films: number[] = [];
    for (const title of ['A', 'B', 'C']) {
      films.push((await send(app, { method: 'POST', url: '/film', payload: { title, language_id: language.language_id, replacement_cost: '9.99' } })).json<{ film_id: number }>().film_id);
    }
    const actors: number[] = [];
    for (const name of ['X', 'Y']) actors.push((await send(app, { method: 'POST', url: '/actor', payload: { first_name: name, last_name: name } })).json<{ actor_id: number }>().actor_id);
    for (const actor of actors) {
      for (const film of films) {
        const link = await send(app, { method: 'POST', url: '/film_actor', payload: { actor_id: actor, film_id: film, character_name: `c${actor},${film}` } });
        expect(link.statusCode).toBe(201);
        expect(link.headers.location).toBe(`/film_actor/${actor},${film}`);
      }
    }
    const [a0 = 0, a1 = 0] = actors;
    const [f0 = 0, f1 = 0, f2 = 0] = films;
    expect((await send(app, { method: 'GET', url: `/film_actor/${a0},${f1}` })).json()).toEqual({ actor_id: a0, film_id: f1, character_name: `c${a0},${f1}` });
    // A belongsTo relation over the composite foreign key (actor_id, film_id), embedded.
    const award = await send(app, { method: 'POST', url: '/actor_award', payload: { actor_id: a0, film_id: f1, award: 'Best', year: 2001 } });
    expect(award.statusCode).toBe(201);
    const awards = await send(app, { method: 'GET', url: '/actor_award?include=film_actor' });
    expect(awards.json<{ film_actor: unknown }[]>().map((a) => a.film_actor)).toEqual([{ actor_id: a0, film_id: f1, character_name: `c${a0},${f1}` }]);
    // include of the hasMany side: each film_actor with the awards whose (actor_id, film_id) it is.
    const withAwards = await send(app, { method: 'GET', url: `/film_actor?include=actor_awards&filter=${encodeURIComponent(`actor_id = ${a0}`)}` });
    expect(withAwards.statusCode, withAwards.body).toBe(200);
    expect(withAwards.json<{ film_id: number; actor_awards: { award: string }[] }[]>().map((r) => [r.film_id, r.actor_awards.map((a) => a.award)])).toEqual([
      [f0, []],
      [f1, ['Best']],
      [f2, []],
    ]);
    // Relation paths over the composite foreign key, both ways.
    const children = await send(app, { method: 'GET', url: `/film_actor/${a0},${f1}/actor_awards` });
    expect(children.statusCode, children.body).toBe(200);
    expect(children.json<{ award: string }[]>().map((a) => a.award)).toEqual(['Best']);
    expect((await send(app, { method: 'GET', url: `/film_actor/${a0},${f0}/actor_awards` })).json()).toEqual([]);
    const { award_id: awardId } = award.json<{ award_id: number }>();
    const parent = await send(app, { method: 'GET', url: `/actor_award/${awardId}/film_actor` });
    expect(parent.statusCode, parent.body).toBe(200);
    expect(parent.json()).toEqual({ actor_id: a0, film_id: f1, character_name: `c${a0},${f1}` });
    const patched = await send(app, { method: 'PATCH', url: `/film_actor/${a1},${f2}`, payload: { character_name: 'Hero' } });
    expect(patched.json()).toEqual({ actor_id: a1, film_id: f2, character_name: 'Hero' });
    for (const malformed of [`${a0}`, `${a0},${f0},1`, `${a0},x`, `,${f0}`]) {
      const response = await send(app, { method: 'GET', url: `/film_actor/${malformed}` });
      expect(response.statusCode, malformed).toBe(404);
      expect(response.json<{ detail: string }>().detail).toContain('actor_id, film_id');
    }

    // Two rows a page, in key order, the cursor over both key fields.
    const seen: string[] = [];
    let next: string | undefined = '/film_actor?limit=2';
    for (let pages = 0; next !== undefined && pages < 10; pages++) {
      const page = await send(app, { method: 'GET', url: next });
      expect(page.statusCode, page.body).toBe(200);
      seen.push(...page.json<{ actor_id: number; film_id: number }[]>().map((r) => `${r.actor_id},${r.film_id}`));
      next = /<([^>]+)>; rel="next"/.exec(String(page.headers.link ?? ''))?.[1];
    }
    expect(seen).toEqual(actors.flatMap((a) => films.map((f) => `${a},${f}`)));

    expect((await send(app, { method: 'DELETE', url: `/film_actor/${a0},${f0}` })).statusCode).toBe(204);
    expect((await send(app, { method: 'GET', url: `/film_actor/${a0},${f0}` })).statusCode).toBe(404);
    expect((await send(app, { method: 'GET', url: `/film_actor/${a0},${f1}` })).statusCode).toBe(200);

    // The outbox names each record by its key, in its URL form.
    const events = await systemQuery(`select "type", "recordId" from ${onPostgres ? `"${systemSchema}".` : ''}"_restgraph_events" where "resource" = 'film_actor' order by "id"`);
    expect(events.map((e) => `${String(e.type)} ${String(e.recordId)}`)).toEqual([
      ...actors.flatMap((a) => films.map((f) => `film_actor.created ${a},${f}`)),
      `film_actor.updated ${a1},${f2}`,
      `film_actor.deleted ${a0},${f0}`,
    ]);
  });

  it('filters on fields whose names have underscores, int64 and decimal ones too', async () => {
    const language = (await send(app, { method: 'POST', url: '/language', payload: { name: 'Filters' } })).json<{ language_id: number }>();
    const film = (payload: Record<string, unknown>): Promise<LightMyRequestResponse> =>
      send(app, { method: 'POST', url: '/film', payload: { language_id: language.language_id, replacement_cost: '1.00', ...payload } });
    expect((await film({ title: 'Filter old', release_year: 1999, rental_rate: '0.99', view_count: '9007199254740993' })).statusCode).toBe(201);
    expect((await film({ title: 'Filter new', release_year: 2020, rental_rate: '4.99', view_count: 7 })).statusCode).toBe(201);
    const titles = async (query: string): Promise<unknown> => {
      const response = await send(app, { method: 'GET', url: `/film?title[startsWith]=Filter&sort=title&fields=title&${query}` });
      expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
      return response.json<{ title: string }[]>().map((f) => f.title);
    };
    expect(await titles('release_year[gte]=2000')).toEqual(['Filter new']);
    expect(await titles('rental_rate=0.99')).toEqual(['Filter old']);
    expect(await titles('view_count[gt]=9007199254740992')).toEqual(['Filter old']);
    expect(await titles(`language_id=${language.language_id}&rental_rate[lt]=5`)).toEqual(['Filter new', 'Filter old']);
  });

  it('reads a composite key of text parts from the raw path: a part holding , or % is percent-encoded', async () => {
    const created = await send(app, { method: 'POST', url: '/tag_link', payload: { kind: 'a,b', name: '100%', note: 'odd' } });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe('/tag_link/a%2Cb,100%25');
    expect((await send(app, { method: 'GET', url: '/tag_link/a%2Cb,100%25' })).json()).toEqual({ kind: 'a,b', name: '100%', note: 'odd' });
    // Decoded first, the same path would have three parts.
    expect((await send(app, { method: 'GET', url: '/tag_link/a,b,100%25' })).statusCode).toBe(404);
    expect((await send(app, { method: 'DELETE', url: '/tag_link/a%2Cb,100%25' })).statusCode).toBe(204);
  });

  it('serves a view read-only: lists, no writes', async () => {
    const list = await send(app, { method: 'GET', url: '/film_list' });
    expect(list.statusCode).toBe(200);
    expect(list.json<{ title: string }[]>().map((r) => r.title)).toContain('Academy Dinosaur');
    const post = await send(app, { method: 'POST', url: '/film_list', payload: { title: 'X' } });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('answers GraphQL: lists under the plural, one record by one argument per key field, typed as the field', async () => {
    const query = '{ countries { country_code name } country(country_code: "FR") { name customers { last_name } } filmActors(first: 2) { actor_id film_id } }';
    const read = await send(app, { method: 'POST', url: '/graphql', payload: { query } });
    expect(read.statusCode).toBe(200);
    const data = read.json<{ data: { countries: unknown[]; country: unknown; filmActors: { actor_id: number; film_id: number }[] } }>().data;
    expect(data.countries).toEqual([{ country_code: 'FR', name: 'France' }]);
    expect(data.country).toEqual({ name: 'France', customers: [{ last_name: 'Smith' }] });
    expect(data.filmActors).toHaveLength(2);
    const [first = { actor_id: 0, film_id: 0 }] = data.filmActors;
    const one = await send(app, { method: 'POST', url: '/graphql', payload: { query: `{ filmActor(actor_id: ${first.actor_id}, film_id: ${first.film_id}) { actor_id film_id } }` } });
    expect(one.json<{ data: unknown }>().data).toEqual({ filmActor: first });
    // The arguments take the types of the fields (Int or SafeInt by the column's range).
    const introspection = await send(app, {
      method: 'POST',
      url: '/graphql',
      payload: { query: '{ q: __type(name: "Query") { fields { name args { name type { kind ofType { name } } } } } t: __type(name: "FilmActor") { fields { name type { kind ofType { name } } } } }' },
    });
    type TypeRef = { name: string; type: { kind: string; ofType: { name: string } | null } };
    const types = introspection.json<{ data: { q: { fields: { name: string; args: TypeRef[] }[] }; t: { fields: TypeRef[] } } }>().data;
    const args = types.q.fields.find((f) => f.name === 'filmActor')?.args ?? [];
    expect(args.map((a) => a.name)).toEqual(['actor_id', 'film_id']);
    for (const arg of args) {
      expect(arg.type.kind).toBe('NON_NULL');
      expect(arg.type.ofType?.name).toBe(types.t.fields.find((f) => f.name === arg.name)?.type.ofType?.name);
    }
    const [a, f] = args.map((arg) => String(arg.type.ofType?.name));
    const byVariables = await send(app, {
      method: 'POST',
      url: '/graphql',
      payload: { query: `query ($a: ${a}!, $f: ${f}!) { filmActor(actor_id: $a, film_id: $f) { character_name } }`, variables: { a: first.actor_id, f: first.film_id } },
    });
    expect(byVariables.json<{ data?: { filmActor: unknown } }>().data?.filmActor, byVariables.body).toEqual({ character_name: `c${first.actor_id},${first.film_id}` });
    const updated = await send(app, { method: 'POST', url: '/graphql', payload: { query: 'mutation { updateCountry(country_code: "FR", input: { name: "République française" }) { name } }' } });
    expect(updated.json<{ data: unknown }>().data).toEqual({ updateCountry: { name: 'République française' } });
    // Every key field is required; the URL form of the key is no argument.
    const partial = await send(app, { method: 'POST', url: '/graphql', payload: { query: `{ filmActor(actor_id: ${first.actor_id}) { actor_id } }` } });
    expect(partial.json<{ errors: { message: string }[] }>().errors[0]?.message).toContain('film_id');
    const byUrlForm = await send(app, { method: 'POST', url: '/graphql', payload: { query: '{ filmActor(id: "1,2") { actor_id } }' } });
    expect(byUrlForm.json<{ errors: { message: string }[] }>().errors[0]?.message).toContain('"id"');
    const missing = await send(app, { method: 'POST', url: '/graphql', payload: { query: '{ country(country_code: "") { name } }' } });
    expect(missing.json<{ data: unknown; errors: { message: string }[] }>()).toMatchObject({ data: { country: null }, errors: [{ message: 'There is no country with country_code "".' }] });
  });

  it('replaces and deletes over GraphQL by the key fields, a uuid key as a string', async () => {
    const language = (await send(app, { method: 'POST', url: '/language', payload: { name: 'GraphQL keys' } })).json<{ language_id: number }>();
    const film = (await send(app, { method: 'POST', url: '/film', payload: { title: 'GQL', language_id: language.language_id, replacement_cost: '1.00' } })).json<{ film_id: number }>();
    const actor = (await send(app, { method: 'POST', url: '/actor', payload: { first_name: 'G', last_name: 'Q' } })).json<{ actor_id: number }>();
    expect((await send(app, { method: 'POST', url: '/film_actor', payload: { actor_id: actor.actor_id, film_id: film.film_id } })).statusCode).toBe(201);
    const gql = async (query: string): Promise<{ data?: Record<string, unknown>; errors?: { message: string }[] }> => (await send(app, { method: 'POST', url: '/graphql', payload: { query } })).json();
    const key = `actor_id: ${actor.actor_id}, film_id: ${film.film_id}`;
    expect(await gql(`mutation { replaceFilmActor(${key}, input: { actor_id: ${actor.actor_id}, film_id: ${film.film_id}, character_name: "Lead" }) { character_name } }`)).toEqual({ data: { replaceFilmActor: { character_name: 'Lead' } } });
    expect(await gql(`mutation { deleteFilmActor(${key}) }`)).toEqual({ data: { deleteFilmActor: `${actor.actor_id},${film.film_id}` } });
    expect((await send(app, { method: 'GET', url: `/film_actor/${actor.actor_id},${film.film_id}` })).statusCode).toBe(404);

    const inventory = (await send(app, { method: 'POST', url: '/inventory', payload: { film_id: film.film_id, store_code: 'B' } })).json<{ inventory_id: number }>();
    const customer = (await send(app, { method: 'POST', url: '/customer', payload: { first_name: 'U', last_name: 'V' } })).json<{ customer_id: number }>();
    const { rental_id: rentalId } = (await send(app, { method: 'POST', url: '/rental', payload: { inventory_id: inventory.inventory_id, customer_id: customer.customer_id } })).json<{ rental_id: string }>();
    expect(await gql(`{ rental(rental_id: "${rentalId.toUpperCase()}") { rental_id } }`)).toEqual({ data: { rental: { rental_id: rentalId } } });
    expect(await gql(`mutation { deleteRental(rental_id: "${rentalId}") }`)).toEqual({ data: { deleteRental: rentalId } });
    // A bigint key (inventory_id) as an integer literal, whether its type is BigInt (PostgreSQL) or SafeInt.
    expect(await gql(`{ inventory(inventory_id: ${inventory.inventory_id}) { store_code } }`)).toEqual({ data: { inventory: { store_code: 'B' } } });
  });

  it('follows GraphQL relations over text and composite keys, and aggregates through a relation', async () => {
    const gql = async (query: string): Promise<{ data?: Record<string, unknown>; errors?: { message: string }[] }> => (await send(app, { method: 'POST', url: '/graphql', payload: { query } })).json();
    // belongsTo by a text key (customer.country_code → country) and by a composite one (actor_award → film_actor).
    const customers = await gql('{ customers(filter: { country_code: { eq: "FR" } }) { last_name country { country_code } } }');
    expect(customers).toEqual({ data: { customers: [{ last_name: 'Smith', country: { country_code: 'FR' } }] } });
    const awards = await gql('{ actorAwards { award film_actor { character_name } } }');
    expect(awards.data?.actorAwards, JSON.stringify(awards)).toEqual([{ award: 'Best', film_actor: { character_name: expect.stringMatching(/^c\d+,\d+$/) as unknown } }]);
    // A relation's aggregate, by the column its foreign key references (rentals of a customer).
    const counted = await gql('{ countries { customersAggregate { count } } }');
    expect(counted, JSON.stringify(counted)).toEqual({ data: { countries: [{ customersAggregate: { count: 1 } }] } });
  });

  it('changes none of the user tables, from the first start to a start again', async () => {
    await app.close();
    ({ app, logs } = await start());
    expect((await send(app, { method: 'GET', url: '/country/FR' })).json()).toEqual({ country_code: 'FR', name: 'République française' });
    expect(userTables()).toBe(before);
  });

  it('serves a table without the columns the schema leaves out, with one warning naming them', async () => {
    const partial = join(folder.path, 'partial.yaml');
    const text = readFileSync(schemaFile, 'utf8');
    writeFileSync(partial, text.replace(/\n {6}description:\n {8}type: string\n/, '\n'));
    expect(readFileSync(partial, 'utf8')).not.toBe(text);
    const other = await start(partial);
    try {
      const warnings = other.logs.filter((l) => String(l.msg).includes('not in the schema'));
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0]?.msg)).toContain('film.description');
      expect(String(warnings[0]?.msg)).toContain('restgraph init --from');
      const film = (await send(other.app, { method: 'GET', url: '/film?limit=1' })).json<Record<string, unknown>[]>()[0];
      expect(film).toHaveProperty('title');
      expect(film).not.toHaveProperty('description');
    } finally {
      await other.app.close();
    }
  });

  it('refuses to start on a schema naming a column the database lacks, and names it', async () => {
    const broken = join(folder.path, 'broken.yaml');
    writeFileSync(broken, readFileSync(schemaFile, 'utf8').replace(/\n {6}first_name:\n/, '\n      first_name:\n        column: given_name\n'));
    await expect(start(broken)).rejects.toThrow(/resources\.actor\.fields\.first_name\.column: .*has no column given_name/);
    expect(userTables()).toBe(before);
  });
});
