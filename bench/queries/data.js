// The rows of the query benchmarks (bench/queries.js): deterministic, the same every run.
//
//   customers  rows / 10, `customer-<n>` (n shuffled, so the name order is not the id order),
//              in one of 50 cities
//   orders     `rows`, each of a customer drawn uniformly, a status (pending 40 %, paid 35 %,
//              shipped 20 %, cancelled 5 %), a total of 1.00 to 1,000.00, a date in 2025-2026
//              (730 days, ~137 orders a day at 100,000) and a note of 6 words of WORDS (600
//              made-up words: each word is in ~1 % of the notes)
import { prng } from '../lib/seed.js';

export const CITIES = Array.from({ length: 50 }, (_, i) => `city-${String(i).padStart(2, '0')}`);
export const STATUSES = ['pending', 'paid', 'shipped', 'cancelled'];
const STATUS_WEIGHTS = [0.4, 0.35, 0.2, 0.05];
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'te', 'su', 'no', 'vi', 'pe', 'da', 'zu', 'fo', 'gi', 'ba', 'ne', 'ho', 'wu', 'ye', 'ci', 'xa'];
/** 600 distinct words of two or three syllables (made up, so no stemming or stop words apply). */
export const WORDS = Array.from({ length: 600 }, (_, i) => {
  const a = SYLLABLES[i % 20];
  const b = SYLLABLES[Math.floor(i / 20) % 20];
  return i < 400 ? `${a}${b}` : `${a}${b}${SYLLABLES[Math.floor(i / 400) + 10]}`;
});
const FIRST_DAY = Date.UTC(2025, 0, 1);
export const DAYS = 730;

/** The date `d` days after 2025-01-01, as YYYY-MM-DD. */
export const dayOf = (d) => new Date(FIRST_DAY + d * 86_400_000).toISOString().slice(0, 10);

export function makeQueryData(rows, seed = 11) {
  const random = prng(seed);
  const customerCount = Math.max(1, Math.floor(rows / 10));
  const order = Array.from({ length: customerCount }, (_, i) => i + 1);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const customers = order.map((n, i) => ({ id: i + 1, name: `customer-${n}`, city: CITIES[Math.floor(random() * CITIES.length)] }));
  const orders = [];
  for (let id = 1; id <= rows; id++) {
    let pick = random();
    let status = STATUSES.length - 1;
    for (let s = 0; s < STATUSES.length; s++) {
      if (pick < STATUS_WEIGHTS[s]) {
        status = s;
        break;
      }
      pick -= STATUS_WEIGHTS[s];
    }
    const words = Array.from({ length: 6 }, () => WORDS[Math.floor(random() * WORDS.length)]);
    orders.push({
      id,
      customerId: 1 + Math.floor(random() * customerCount),
      status: STATUSES[status],
      total: Math.round(100 + random() * 99_900) / 100,
      placedOn: dayOf(Math.floor(random() * DAYS)),
      note: words.join(' '),
    });
  }
  return { customers, orders };
}

/** The rows as `restgraph export data` writes them (NDJSON), for `restgraph import data`. */
export function exportText({ customers, orders }) {
  const lines = [];
  for (const record of customers) lines.push(JSON.stringify({ resource: 'customers', record }));
  for (const record of orders) lines.push(JSON.stringify({ resource: 'orders', record }));
  return `${lines.join('\n')}\n`;
}
