import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CaptureRelay } from '../src/core/capture-relay.js';
import { RecordStore } from '../src/store/record-store.js';
import { resourceNamed, type ResourceModel, type SchemaModel } from '../src/schema/schema-model.js';
import type { StoredRecord } from '../src/store/list-spec.js';
import { CAPTURE_OPERATIONS, captureTriggerName, openCaptureTriggers, type CaptureTriggers } from '../src/store/capture/capture-triggers.js';
import { leaveOwnWritesUncaptured } from '../src/store/capture/captured-change-store.js';
import { EventStore, type StoredEvent } from '../src/store/event-store.js';
import { openDatabase } from '../src/store/open-database.js';
import type { SqlDatabase, SqlRow } from '../src/store/sql-database.js';
import { upgradeSystemTables } from '../src/store/system-migrations.js';
import { prepareMappedSystemTables } from '../src/store/mapped-system-tables.js';
import { createCaptureSample, type CaptureSample } from './helpers/capture-sample.js';
import { tempDir } from './helpers/test-app.js';

/**
 * Capture of other programs' writes on a mapped database (docs/existing-database.md#events-for-writes-made-by-other-programs),
 * at the database level, on the suite's database with the film-rental sample: the triggers record
 * each insert, update and delete another connection makes; the relay turns them into the events
 * restgraph's own writes make (field names, `previous` on updates), appends them to the outbox
 * exactly once and in order, values exact; restgraph's own writes are not recorded; disable leaves
 * no trigger behind.
 */

let dir: ReturnType<typeof tempDir>;
let sample: CaptureSample;
let triggers: CaptureTriggers;
let db: SqlDatabase;
let events: EventStore;

/** A table of more columns than SQLite's json_object takes in one call (its triggers build the row in groups of 50). */
const WIDE_COLUMNS = 60;
const WIDE_TABLE = `create table wide (id integer primary key, "a.b" text, ${Array.from({ length: WIDE_COLUMNS }, (_, i) => `c${i + 1} integer`).join(', ')});`;

const TABLES = [{ table: 'film' }, { table: 'customer' }, { table: 'language' }];

beforeEach(async () => {
  dir = tempDir('rg-capture-');
  sample = await createCaptureSample(dir.path);
  triggers = await openCaptureTriggers(sample.database.url, { systemSchema: sample.systemSchema, ...(sample.databaseSchema === undefined ? {} : { databaseSchema: sample.databaseSchema }) });
  await triggers.enable(TABLES);
  db = (await openDatabase(sample.restgraphUrl)).db;
  await upgradeSystemTables(db);
  events = new EventStore(db);
});

afterEach(async () => {
  await triggers.close();
  await db.close();
  await sample.drop();
  dir.cleanup();
});

function resource(name: string): ResourceModel {
  const model = sample.schema.resources.get(name);
  if (model === undefined) throw new Error(`no resource ${name}`);
  return model;
}

function relay(options: Partial<ConstructorParameters<typeof CaptureRelay>[2]> = {}): CaptureRelay {
  return new CaptureRelay(db, events, { schema: sample.schema, systemSchema: sample.systemSchema, decodeRow: decoderOf(db, sample.schema), ...options });
}

/** The record store's decoding of rows, as the server gives it to the relay (app/capture-work.ts). */
function decoderOf(database: SqlDatabase, schema: SchemaModel): (model: ResourceModel, row: SqlRow) => StoredRecord {
  const records = new RecordStore(database, database.rules, (name) => resourceNamed(schema, name));
  return (model, row) => records.decodeRow(model, row);
}

/** A table of the sample, named as restgraph's connections must name it (PostgreSQL: qualified, their search_path is the system schema). */
function table(name: string): string {
  return sample.databaseSchema === undefined ? `"${name}"` : `"${sample.databaseSchema}"."${name}"`;
}

async function captured(): Promise<number> {
  const from = sample.database.dialect === 'postgres' ? `"${sample.systemSchema}"._restgraph_captured_changes` : '_restgraph_captured_changes';
  const rows = await sample.database.query<{ n: number | string }>(`select count(*) as n from ${from}`);
  return Number(rows[0]?.n);
}

async function outbox(): Promise<StoredEvent[]> {
  return events.after(0, 1000);
}

describe('capture: triggers and relay', () => {
  it('turns inserts, updates and deletes by another program into created, updated and deleted events, once, in order', async () => {
    await sample.outside("insert into language (name) values ('English')");
    await sample.outside("insert into film (film_id, title, language_id, replacement_cost, rating) values (1, 'Alien', 1, 19.99, 'R')");
    await sample.outside("update film set title = 'Aliens', rating = 'R' where film_id = 1");
    await sample.outside('update film set title = title where film_id = 1');
    await sample.outside('delete from film where film_id = 1');
    expect(await captured()).toBe(4);

    expect(await relay().relayOnce()).toBe(4);
    expect(await relay().relayOnce()).toBe(0);
    expect(await captured()).toBe(0);
    const stored = await outbox();
    expect(stored.map((e) => [e.type, e.resource, e.recordId])).toEqual([
      ['language.created', 'language', 1],
      ['film.created', 'film', 1],
      ['film.updated', 'film', 1],
      ['film.deleted', 'film', 1],
    ]);
    const [, created, updated, deleted] = stored;
    expect(created?.data.object).toMatchObject({ film_id: 1, title: 'Alien', language_id: 1, rating: 'R' });
    expect(Object.keys(created?.data.object ?? {})).toEqual([...resource('film').fields.keys()]);
    expect(created?.data.previous).toBeUndefined();
    expect(updated?.data.object).toMatchObject({ film_id: 1, title: 'Aliens' });
    expect(updated?.data.previous).toEqual({ title: 'Alien' });
    expect(deleted?.data.object).toMatchObject({ film_id: 1, title: 'Aliens' });
    for (const event of stored) expect(Date.parse(event.occurredAt)).not.toBeNaN();
  });

  it('gives the object as a read of the row gives it: mapped column names as fields, values exact', async () => {
    const film = resource('film');
    const mapping = film.mapping;
    if (mapping === undefined) throw new Error('film is not mapped');
    const threeD = [...mapping.columns].find(([, column]) => column === '3d')?.[0];
    expect(threeD).toBeDefined();
    expect(threeD).not.toBe('3d');
    const onPostgres = sample.database.dialect === 'postgres';
    await sample.outside("insert into language (name) values ('English')");
    await sample.outside(
      onPostgres
        ? `insert into film (title, language_id, replacement_cost, rental_rate, special_features, metadata, poster, running_time, "3d", view_count)
           values ('Big', 1, 123456789012345678.91, 0.10, '{Trailers,"Deleted Scenes"}', '{"n": 12345678901234567890, "x": [1.5]}', '\\x00ff10', '1 hour 30 minutes', true, 9007199254740991)`
        : `insert into film (title, language_id, replacement_cost, rental_rate, special_features, metadata, poster, running_time, "3d", view_count)
           values ('Big', 1, 0.1, 0.3, '["Trailers"]', '{"x": [1.5]}', x'00ff10', '01:30:00', 1, 9007199254740991)`,
    );
    await relay().relayOnce();
    const event = (await outbox()).find((e) => e.type === 'film.created');
    const columns = [...mapping.columns].map(([field, column]) => `"${column}" as "${field}"`).join(', ');
    const [row] = await db.all({ sql: `select ${columns} from ${table('film')}`, parameters: [] });
    if (row === undefined) throw new Error('no film');
    expect(event?.data.object).toEqual(decoderOf(db, sample.schema)(film, row));
    expect(event?.data.object[threeD ?? '']).toBe(true);
    expect(event?.data.object.view_count).toBe(9007199254740991);
    if (onPostgres) expect(event?.data.object.replacement_cost).toBe('123456789012345678.91');
    // A decimal as REST returns it: a string of the column's scale (SQLite keeps the value as a real).
    else expect(event?.data.object.replacement_cost).toBe('0.10');
  });

  it("leaves restgraph's own writes out: they have their events already", async () => {
    await leaveOwnWritesUncaptured(db);
    await db.transaction(async (tx) => {
      await tx.run({ sql: `insert into ${table('language')} (name) values ('Own')`, parameters: [] });
    });
    expect(await captured()).toBe(0);
    await sample.outside("insert into language (name) values ('Theirs')");
    expect(await captured()).toBe(1);
    await relay().relayOnce();
    expect((await outbox()).map((e) => [e.type, e.data.object.name])).toEqual([['language.created', 'Theirs']]);
  });

  it('keeps the captured changes when relaying them fails, and relays them once when it works again', async () => {
    await sample.outside("insert into language (name) values ('English')");
    await sample.outside("insert into language (name) values ('French')");
    let failures = 1;
    const failingOnce = relay({
      decodeRow: (model, row) => {
        if (failures-- > 0) throw new Error('decoding failed');
        return decoderOf(db, sample.schema)(model, row);
      },
    });
    await expect(failingOnce.relayOnce()).rejects.toThrow('decoding failed');
    expect(await captured()).toBe(2);
    expect(await outbox()).toEqual([]);
    expect(await failingOnce.relayOnce()).toBe(2);
    expect((await outbox()).map((e) => e.data.object.name)).toEqual(['English', 'French']);
  });

  it('relays in bounded batches, in capture order', async () => {
    for (let i = 0; i < 7; i++) await sample.outside('insert into language (name) values (?)', [`L${i}`]);
    const small = relay({ batchSize: 3 });
    expect(await small.relayOnce()).toBe(3);
    expect(await small.relayOnce()).toBe(3);
    expect(await small.relayOnce()).toBe(1);
    expect((await outbox()).map((e) => e.data.object.name)).toEqual(['L0', 'L1', 'L2', 'L3', 'L4', 'L5', 'L6']);
  });

  it('relays on its own once started (signals on PostgreSQL, polling on SQLite), and stops', async () => {
    // PostgreSQL: no poll within the test, so the trigger's notification is what wakes the relay.
    const running = relay({ pollIntervalMs: sample.database.dialect === 'postgres' ? 600_000 : 50 });
    await running.start({ failing: () => undefined, recovered: () => undefined });
    try {
      const eventually = async (count: number): Promise<void> => {
        const deadline = Date.now() + 20_000;
        while ((await outbox()).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      };
      await sample.outside("insert into language (name) values ('Live')");
      await eventually(1);
      // The relay is idle now (its first look is over): the next change wakes it.
      await new Promise((r) => setTimeout(r, 300));
      await sample.outside("insert into language (name) values ('Later')");
      await eventually(2);
      expect((await outbox()).map((e) => e.data.object.name)).toEqual(['Live', 'Later']);
    } finally {
      await running.stop();
    }
  });

  it('status lists the tables and operations; enable again changes nothing; disable removes every trigger and nothing else', async () => {
    expect(await triggers.status(TABLES)).toEqual(TABLES.map(({ table }) => ({ table, installed: [...CAPTURE_OPERATIONS], current: true, mapped: true })));
    await triggers.enable(TABLES);
    expect(await triggers.status([...TABLES, { table: 'actor' }])).toContainEqual({ table: 'actor', installed: [], current: false, mapped: true });
    expect(await triggers.status([{ table: 'film' }])).toContainEqual({ table: 'customer', installed: [...CAPTURE_OPERATIONS], current: false, mapped: false });

    const removed = await triggers.disable();
    expect(removed).toHaveLength(TABLES.length * CAPTURE_OPERATIONS.length);
    expect((await triggers.status(TABLES)).every((s) => s.installed.length === 0)).toBe(true);
    if (sample.database.dialect === 'postgres') {
      const left = await sample.database.query(
        'select t.tgname from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = ? and not t.tgisinternal',
        [sample.databaseSchema],
      );
      expect(left).toEqual([]);
      const functions = await sample.database.query('select proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = ?', [sample.systemSchema]);
      expect(functions).toEqual([]);
    } else {
      expect(await sample.database.query("select name from sqlite_master where type = 'trigger'")).toEqual([]);
    }
    // The sample's tables work as before, and nothing more is recorded.
    await sample.outside("insert into language (name) values ('After')");
    expect(await captured()).toBe(0);
    expect(await triggers.disable()).toEqual([]);
  });

  it('reports a table whose columns changed since enable as outdated (SQLite lists the columns in its triggers)', async () => {
    await sample.outside('alter table language add column code text');
    const [state] = await triggers.status([{ table: 'language' }]);
    expect(state?.current).toBe(sample.database.dialect === 'postgres');
    await triggers.enable([{ table: 'language' }]);
    expect((await triggers.status([{ table: 'language' }]))[0]?.current).toBe(true);
  });

  it('captures a table of more columns than one SQLite JSON call takes, nulls kept, odd column names read back', async () => {
    const wide = await createCaptureSample(mkdtempSync(join(dir.path, 'wide-')), WIDE_TABLE);
    const wideTriggers = await openCaptureTriggers(wide.database.url, { systemSchema: wide.systemSchema, ...(wide.databaseSchema === undefined ? {} : { databaseSchema: wide.databaseSchema }) });
    const wideDb = (await openDatabase(wide.restgraphUrl)).db;
    try {
      await wideTriggers.enable([{ table: 'wide' }]);
      await upgradeSystemTables(wideDb);
      const wideEvents = new EventStore(wideDb);
      await wide.outside(`insert into wide (id, "a.b", c57, c58) values (1, 'dot', 57, null)`);
      await new CaptureRelay(wideDb, wideEvents, { schema: wide.schema, systemSchema: wide.systemSchema, decodeRow: decoderOf(wideDb, wide.schema) }).relayOnce();
      const [event] = await wideEvents.after(0, 10);
      const model = wide.schema.resources.get('wide');
      const dotted = [...(model?.mapping?.columns ?? [])].find(([, column]) => column === 'a.b')?.[0] ?? '';
      expect(Object.keys(event?.data.object ?? {})).toHaveLength(WIDE_COLUMNS + 2);
      expect(event?.data.object).toMatchObject({ id: 1, [dotted]: 'dot', c1: null, c57: 57, c58: null });
    } finally {
      await wideTriggers.close();
      await wideDb.close();
      await wide.drop();
    }
  });

  it('names records of text, uuid and composite keys (country, rental, film_actor) in the outbox, as a served mapped database keeps it', async () => {
    // The outbox of a served mapped database (app/mapped-storage.ts): recordId holds text on PostgreSQL.
    await prepareMappedSystemTables(db, sample.databaseSchema === undefined ? undefined : sample.systemSchema);
    await triggers.enable([{ table: 'country' }, { table: 'rental' }, { table: 'film_actor' }, { table: 'actor' }, { table: 'inventory' }]);
    await sample.outside("insert into language (name) values ('English')");
    await sample.outside("insert into customer (customer_id, first_name, last_name) values (1, 'Ada', 'Lovelace')");
    await sample.outside("insert into film (film_id, title, language_id, replacement_cost) values (1, 'Alien', 1, 19.99)");
    await sample.outside("insert into actor (first_name, last_name) values ('Sigourney', 'Weaver')");
    await sample.outside("insert into inventory (inventory_id, film_id, store_code) values (1, 1, 'A')");
    await sample.outside("insert into country (country_code, name) values ('FR', 'France')");
    const rental = '6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f';
    await sample.outside('insert into rental (rental_id, inventory_id, customer_id) values (?, 1, 1)', [rental]);
    await sample.outside("insert into film_actor (actor_id, film_id, character_name) values (1, 1, 'Ripley')");
    await sample.outside('delete from film_actor where actor_id = 1 and film_id = 1');
    await relay().relayOnce();
    const rows = await db.all({ sql: 'select type, "recordId" as "recordId" from _restgraph_events order by id', parameters: [] });
    expect(rows.filter((r) => !['language', 'film', 'customer'].includes(String(r.type).split('.')[0] ?? '')).map((r) => `${String(r.type)} ${String(r.recordId)}`)).toEqual([
      'actor.created 1',
      'inventory.created 1',
      'country.created FR',
      `rental.created ${rental}`,
      'film_actor.created 1,1',
      'film_actor.deleted 1,1',
    ]);
  });
});

describe('capture trigger names', () => {
  it('fit in 63 bytes, recognisable and distinct, for long table names', () => {
    const a = captureTriggerName(`${'t'.repeat(70)}_a`, 'insert');
    const b = captureTriggerName(`${'t'.repeat(70)}_b`, 'insert');
    for (const name of [a, b]) {
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
      expect(name).toMatch(/^restgraph_capture_t+_[0-9a-f]{8}_insert$/);
    }
    expect(a).not.toBe(b);
    expect(captureTriggerName('film', 'delete')).toBe('restgraph_capture_film_delete');
  });
});
