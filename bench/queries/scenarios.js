// The query benchmarks' scenarios (bench/queries.js), in the shape of bench/scenarios.js (name,
// method, path(ctx), check) plus `versus`: the scenario whose req/s this one's is divided by
// (the plain list) and `target`, the least ratio it should keep, or none to show it unjudged.
// Every request draws its own values (a customer, a day, words) from ctx.random, so the server's
// list cache is not what is measured; each check runs one request of the scenario's kind and
// compares it with the same query over the seeded rows in memory.
import { sameIds } from '../lib/check-requests.js';
import { CITIES, DAYS, WORDS, dayOf } from './data.js';

const LIMIT = 20;
const q = (text) => encodeURIComponent(text);
const pick = (list, random) => list[Math.floor(random() * list.length)];
const customerOf = ({ size, random }) => 1 + Math.floor(random() * Math.max(1, Math.floor(size / 10)));

/** Orders in the list order `sort=placedOn` (then id), the first `limit` of those `keep` accepts. */
function firstOrders(orders, keep, limit = LIMIT) {
  return orders
    .filter(keep)
    .sort((a, b) => (a.placedOn < b.placedOn ? -1 : a.placedOn > b.placedOn ? 1 : a.id - b.id))
    .slice(0, limit)
    .map((o) => o.id);
}

const orTotalPath = (customerId, total) => `/orders?sort=placedOn&limit=${LIMIT}&filter=${q(`customerId = ${customerId} or total = ${total}`)}`;
/** A total some seeded order has (the data's totals are 1.00 to 1,000.00 in cents, ~1 order each). */
const totalOf = ({ random }) => Math.round(100 + Math.floor(random() * 99_900)) / 100;
const orListPath = (customerId, day) => `/orders?sort=placedOn&limit=${LIMIT}&filter=${q(`customerId = ${customerId} or placedOn = '${day}'`)}`;
const pathListPath = (city, total) => `/orders?sort=placedOn&limit=${LIMIT}&filter=${q(`customer.city = '${city}' or total >= ${total}`)}`;
const anyPath = (total) => `/customers?sort=name&limit=${LIMIT}&filter=${q(`orders.any(status = 'cancelled' and total >= ${total})`)}`;
const searchPath = (first, second) => `/orders?limit=${LIMIT}&count=true&search=${q(`${first} ${second.slice(0, 3)}`)}`;

export const queryScenarios = [
  {
    name: 'orders sorted limit 20',
    method: 'GET',
    path: `/orders?sort=placedOn&limit=${LIMIT}`,
    check: ({ request, data }) => sameIds(request, `/orders?sort=placedOn&limit=${LIMIT}`, firstOrders(data.orders, () => true)),
  },
  {
    // Two indexed conditions joined by `or`, each selective (~10 orders of the customer, ~1 of the
    // total): both indexes are used (SQLite's MULTI-INDEX OR, PostgreSQL's BitmapOr) and about as
    // many rows read as the plain page reads, so the ratio is what the filter itself costs.
    name: 'orders filtered (or of two indexed)',
    method: 'GET',
    path: (ctx) => orTotalPath(customerOf(ctx), totalOf(ctx)),
    versus: 'orders sorted limit 20',
    target: 0.7,
    check: ({ request, data }) =>
      sameIds(request, orTotalPath(42, data.orders[99].total), firstOrders(data.orders, (o) => o.customerId === 42 || o.total === data.orders[99].total)),
  },
  {
    // The same with a broad second condition (~137 orders of a day): every matching row is read
    // and sorted before the first 20 are taken, so SQLite does ~3 times the plain page's work.
    name: 'orders filtered (or of two indexed; ~150 rows)',
    method: 'GET',
    path: (ctx) => orListPath(customerOf(ctx), dayOf(Math.floor(ctx.random() * DAYS))),
    versus: 'orders sorted limit 20',
    check: ({ request, data }) =>
      sameIds(request, orListPath(42, dayOf(100)), firstOrders(data.orders, (o) => o.customerId === 42 || o.placedOn === dayOf(100))),
  },
  {
    // A condition through the belongsTo relation (a customer's city, ~2 % of the orders) or an
    // indexed range (~0.1 %).
    name: 'orders filtered (or + relation path)',
    method: 'GET',
    path: (ctx) => pathListPath(pick(CITIES, ctx.random), 990 + Math.floor(ctx.random() * 10)),
    versus: 'orders sorted limit 20',
    check: ({ request, data }) => {
      const city = new Map(data.customers.map((c) => [c.id, c.city]));
      return sameIds(request, pathListPath(CITIES[7], 995), firstOrders(data.orders, (o) => city.get(o.customerId) === CITIES[7] || o.total >= 995));
    },
  },
  {
    // Customers with at least one cancelled order of at least `total` (a correlated EXISTS over
    // the orders' customerId index).
    name: 'customers filtered (orders.any)',
    method: 'GET',
    path: (ctx) => anyPath(500 + Math.floor(ctx.random() * 400)),
    versus: 'orders sorted limit 20',
    check: ({ request, data }) => {
      const hit = new Set(data.orders.filter((o) => o.status === 'cancelled' && o.total >= 700).map((o) => o.customerId));
      const expected = data.customers
        .filter((c) => hit.has(c.id))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
        .slice(0, LIMIT)
        .map((c) => c.id);
      return sameIds(request, anyPath(700), expected);
    },
  },
  {
    // Count and sum of every order, per status: the whole table read each time (no cache).
    name: 'aggregate groupBy status',
    method: 'GET',
    path: (ctx) => `/orders/aggregate?groupBy=status&count=true&sum=total&filter=${q(`total >= ${Math.floor(ctx.random() * 5)}`)}`,
    versus: 'orders sorted limit 20',
    async check({ request, data }) {
      const path = '/orders/aggregate?groupBy=status&count=true&sum=total';
      const res = await request('GET', path);
      if (res.status !== 200 || !Array.isArray(res.json)) return [`GET ${path} -> ${res.status} ${JSON.stringify(res.json)?.slice(0, 200)}`];
      const counts = {};
      for (const o of data.orders) counts[o.status] = (counts[o.status] ?? 0) + 1;
      const problems = [];
      for (const [status, n] of Object.entries(counts)) {
        const group = res.json.find((g) => g.group?.status === status);
        if (group?.count !== n) problems.push(`${path}: ${status} counted ${group?.count}, expected ${n}`);
      }
      return problems;
    },
  },
  {
    // Full-text search: a word and the first three letters of another (a prefix), by relevance.
    name: 'search',
    method: 'GET',
    path: (ctx) => searchPath(pick(WORDS, ctx.random), pick(WORDS, ctx.random)),
    versus: 'orders sorted limit 20',
    async check({ request, data }) {
      const [first, second] = [WORDS[3], WORDS[250]];
      const path = searchPath(first, second);
      const prefix = second.slice(0, 3);
      const matching = data.orders.filter((o) => {
        const words = o.note.split(' ');
        return words.includes(first) && words.some((w) => w.startsWith(prefix));
      });
      const res = await request('GET', path);
      if (res.status !== 200 || !Array.isArray(res.json)) return [`GET ${path} -> ${res.status} ${JSON.stringify(res.json)?.slice(0, 200)}`];
      const total = Number(res.headers.get('x-total-count'));
      const ids = new Set(matching.map((o) => o.id));
      const problems = [];
      if (total !== matching.length) problems.push(`${path}: X-Total-Count ${total}, expected ${matching.length}`);
      if (res.json.some((r) => !ids.has(r.id))) problems.push(`${path}: a row that does not match`);
      if (res.json.length !== Math.min(LIMIT, matching.length)) problems.push(`${path}: ${res.json.length} rows`);
      return problems;
    },
  },
];
