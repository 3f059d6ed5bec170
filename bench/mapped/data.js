// The rows of the mapped-database benchmarks (bench/mapped.js): a film-rental database of N rentals
// (the largest table), with customers, inventory and films in proportion, deterministic. Every
// value the load generator needs (a rental's uuid, a customer's id) is a function of a number, so
// bench/load.js draws requests without the rows:
//
//   rentals     N; rental r: uuid rentalUuid(r) (side A's key; side B's id is r), customer
//               1 + (r - 1) % customers, inventory 1 + (r * 31) % inventory, rented_at a minute
//               of its own (a shuffled order: never the key order, and no two alike, so every
//               sort has one answer on both sides), returned three days later but for every
//               tenth rental
//   customers   N / 20 (20 rentals each)
//   inventory   N / 4, each a copy of film 1 + (i * 7) % films
//   films       N / 100, in one of 3 languages
import { createHash } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { prng } from '../lib/seed.js';

const SAMPLE_SQL = fileURLToPath(new URL('../../examples/film-rental/sqlite.sql', import.meta.url));
const LANGUAGES = ['English', 'French', 'German'];
const RATINGS = ['G', 'PG', 'PG-13', 'R', 'NC-17'];
const START = Date.UTC(2025, 0, 1);

/** How many rows each table has for `rentals` rentals. */
export function counts(rentals) {
  return {
    rentals,
    customers: Math.max(1, Math.round(rentals / 20)),
    inventory: Math.max(1, Math.round(rentals / 4)),
    films: Math.max(1, Math.round(rentals / 100)),
    languages: LANGUAGES.length,
  };
}

/** Rental r's uuid (version 4's form, lower case), the same in every run. */
export function rentalUuid(r) {
  const h = createHash('md5').update(`rental-${r}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const customerOf = (r, customers) => 1 + ((r - 1) % customers);

const iso = (ms) => new Date(ms).toISOString();

/** Every row, as plain objects with the sample database's column names. */
export function makeMappedData(rentals, seed = 17) {
  const n = counts(rentals);
  const random = prng(seed);
  const minute = Array.from({ length: rentals }, (_, i) => i);
  for (let i = minute.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [minute[i], minute[j]] = [minute[j], minute[i]];
  }
  const language = LANGUAGES.map((name, i) => ({ language_id: i + 1, name }));
  const film = Array.from({ length: n.films }, (_, i) => ({
    film_id: i + 1,
    title: `Film ${String(i + 1).padStart(6, '0')}`,
    description: `The story of film ${i + 1}`,
    release_year: 1990 + (i % 30),
    language_id: 1 + (i % LANGUAGES.length),
    rental_rate: 4.99,
    replacement_cost: 19.99,
    rating: RATINGS[i % RATINGS.length],
    view_count: i * 13,
  }));
  const inventory = Array.from({ length: n.inventory }, (_, i) => ({
    inventory_id: i + 1,
    film_id: 1 + (((i + 1) * 7) % n.films),
    store_code: `S${1 + (i % 2)}`,
  }));
  const customer = Array.from({ length: n.customers }, (_, i) => ({
    customer_id: i + 1,
    first_name: `First${i + 1}`,
    last_name: `Last${i + 1}`,
    email: `customer${i + 1}@example.com`,
    active: true,
  }));
  const rental = Array.from({ length: rentals }, (_, i) => {
    const r = i + 1;
    const rented = START + minute[i] * 60_000;
    return {
      rental_id: rentalUuid(r),
      rented_at: iso(rented),
      inventory_id: 1 + ((r * 31) % n.inventory),
      customer_id: customerOf(r, n.customers),
      returned_at: r % 10 === 0 ? null : iso(rented + 3 * 86_400_000),
    };
  });
  return { counts: n, language, film, inventory, customer, rental };
}

/** Side A: the sample database (examples/film-rental/sqlite.sql) in a fresh SQLite file, with the rows. */
export function writeSampleDatabase(file, data) {
  const db = new BetterSqlite3(file);
  try {
    db.exec(readFileSync(SAMPLE_SQL, 'utf8'));
    const insertAll = (table, rows) => {
      if (!rows.length) return;
      const columns = Object.keys(rows[0]);
      const statement = db.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`);
      for (const row of rows) statement.run(Object.fromEntries(columns.map((c) => [c, typeof row[c] === 'boolean' ? Number(row[c]) : row[c]])));
    };
    db.transaction(() => {
      for (const table of ['language', 'film', 'inventory', 'customer', 'rental']) insertAll(table, data[table]);
    })();
  } finally {
    db.close();
  }
}

/** Side B: the same rows for restgraph's own tables (bench/mapped/schema.yaml), as `restgraph export data` writes them (NDJSON). */
export function exportText(data) {
  const lines = [];
  const add = (resource, record) => lines.push(JSON.stringify({ resource, record }));
  for (const l of data.language) add('languages', { id: l.language_id, name: l.name });
  for (const f of data.film) {
    add('films', {
      id: f.film_id,
      title: f.title,
      description: f.description,
      releaseYear: f.release_year,
      languageId: f.language_id,
      rentalRate: f.rental_rate,
      replacementCost: f.replacement_cost,
      rating: f.rating,
      viewCount: f.view_count,
    });
  }
  for (const i of data.inventory) add('inventories', { id: i.inventory_id, filmId: i.film_id, storeCode: i.store_code });
  for (const c of data.customer) {
    add('customers', { id: c.customer_id, firstName: c.first_name, lastName: c.last_name, email: c.email, active: c.active });
  }
  data.rental.forEach((r, i) => {
    add('rentals', { id: i + 1, rentedAt: r.rented_at, inventoryId: r.inventory_id, customerId: r.customer_id, returnedAt: r.returned_at });
  });
  return `${lines.join('\n')}\n`;
}
