// The mapped-database benchmarks' scenarios (bench/mapped.js), in pairs: the same request to side A
// (the film-rental sample database served through the schema `restgraph init --from` wrote) and to
// side B (restgraph's own tables with the same rows, bench/mapped/schema.yaml), in the words of
// each schema. A's ratio to B has the target 0.9. A rental is addressed by its key: the uuid
// `rental_id` on A, the integer `id` on B (the same rental: bench/mapped/data.js).
//
// Each pair is checked once before the load: both sides answer the rows the data says, field for
// field (B's createdAt and updatedAt, which A has no column for, aside).
import { counts, rentalUuid } from './data.js';

export const MAPPED_TARGET = 0.9;
const LIMIT = 20;

const drawRental = ({ size, random }) => 1 + Math.floor(random() * size);
const drawCustomer = ({ size, random }) => 1 + Math.floor(random() * counts(size).customers);

const GRAPHQL = {
  A: 'query C($id: ID!) { customer(id: $id) { first_name last_name rentals(first: 2, sort: [RENTED_AT_DESC]) { rental_id rented_at inventory { film { title } } } } }',
  B: 'query C($id: ID!) { customer(id: $id) { firstName lastName rentals(first: 2, sort: [RENTED_AT_DESC]) { id rentedAt inventory { film { title } } } } }',
};

const paths = {
  get: { A: (r) => `/rental/${rentalUuid(r)}`, B: (r) => `/rentals/${r}` },
  list: {
    A: (c) => `/rental?customer_id=${c}&sort=-rented_at&limit=${LIMIT}`,
    B: (c) => `/rentals?customerId=${c}&sort=-rentedAt&limit=${LIMIT}`,
  },
};

/** A rental as either side returns it, in one shape (the key as the side names it: uuid or number). */
const rentalOf = {
  A: (j) => j && { key: j.rental_id, rentedAt: j.rented_at, inventoryId: j.inventory_id, customerId: j.customer_id, returnedAt: j.returned_at },
  B: (j) => j && { key: j.id, rentedAt: j.rentedAt, inventoryId: j.inventoryId, customerId: j.customerId, returnedAt: j.returnedAt },
};

/** Rental number r (1-based) of the data, in that shape, keyed as `side` keys it. */
function expectedRental(data, r, side) {
  const row = data.rental[r - 1];
  return { key: side === 'A' ? row.rental_id : r, rentedAt: row.rented_at, inventoryId: row.inventory_id, customerId: row.customer_id, returnedAt: row.returned_at };
}

/** Numbers (1-based) of customer c's rentals, latest first. */
function rentalsOf(data, c) {
  const out = [];
  for (let r = 1; r <= data.rental.length; r++) if (data.rental[r - 1].customer_id === c) out.push(r);
  return out.sort((x, y) => (data.rental[y - 1].rented_at < data.rental[x - 1].rented_at ? -1 : 1));
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const short = (v) => JSON.stringify(v)?.slice(0, 300);

/** Customers the checks look at: the first, the last and one between. */
const checkedCustomers = (data) => [...new Set([1, data.customer.length, Math.ceil(data.customer.length / 2)])];

async function checkGet(side, request, data) {
  const problems = [];
  const n = data.rental.length;
  for (const r of [...new Set([1, n, Math.ceil(n / 3)])]) {
    const path = paths.get[side](r);
    const res = await request('GET', path);
    if (res.status !== 200) problems.push(`GET ${path} -> ${res.status} ${short(res.json)}`);
    else if (!same(rentalOf[side](res.json), expectedRental(data, r, side))) problems.push(`GET ${path}: ${short(res.json)}, expected ${short(expectedRental(data, r, side))}`);
  }
  const missing = side === 'A' ? `/rental/${rentalUuid(n + 1)}` : `/rentals/${n + 1}`;
  const miss = await request('GET', missing);
  if (miss.status !== 404) problems.push(`GET ${missing} -> ${miss.status}, expected 404`);
  return problems;
}

async function checkList(side, request, data) {
  const problems = [];
  for (const c of checkedCustomers(data)) {
    const path = paths.list[side](c);
    const res = await request('GET', path);
    const expected = rentalsOf(data, c).slice(0, LIMIT).map((r) => expectedRental(data, r, side));
    if (res.status !== 200 || !Array.isArray(res.json)) problems.push(`GET ${path} -> ${res.status} ${short(res.json)}`);
    else if (!same(res.json.map(rentalOf[side]), expected)) problems.push(`GET ${path}: ${short(res.json)}, expected ${short(expected)}`);
  }
  return problems;
}

async function checkGraphql(side, request, data) {
  const problems = [];
  for (const c of checkedCustomers(data)) {
    const res = await request('POST', '/graphql', { query: GRAPHQL[side], variables: { id: String(c) } });
    const customer = res.json?.data?.customer;
    const got = customer && {
      name: side === 'A' ? [customer.first_name, customer.last_name] : [customer.firstName, customer.lastName],
      rentals: customer.rentals?.map((x) => ({
        key: side === 'A' ? x.rental_id : Number(x.id),
        rentedAt: side === 'A' ? x.rented_at : x.rentedAt,
        title: x.inventory?.film?.title,
      })),
    };
    const row = data.customer[c - 1];
    const expected = {
      name: [row.first_name, row.last_name],
      rentals: rentalsOf(data, c)
        .slice(0, 2)
        .map((r) => {
          const rental = data.rental[r - 1];
          const film = data.film[data.inventory[rental.inventory_id - 1].film_id - 1];
          return { key: side === 'A' ? rental.rental_id : r, rentedAt: rental.rented_at, title: film.title };
        }),
    };
    if (res.status !== 200 || res.json?.errors) problems.push(`POST /graphql (customer ${c}) -> ${res.status} ${short(res.json)}`);
    else if (!same(got, expected)) problems.push(`POST /graphql (customer ${c}): ${short(res.json)}, expected ${short(expected)}`);
  }
  return problems;
}

/** B, A, and A's file in WAL mode (side AW: the same requests as A's; B's file is in WAL mode, as restgraph makes its own). */
const pair = (label, { A, B }) => [
  { side: 'B', name: `${label} (own tables)`, ...B },
  { side: 'A', name: `${label} (mapped)`, versus: `${label} (own tables)`, target: MAPPED_TARGET, ...A },
  { side: 'AW', name: `${label} (mapped, WAL)`, versus: `${label} (own tables)`, target: MAPPED_TARGET, ...A },
];

/** In load order: each scenario's B, A and AW, so the sides of a pair run one after the other. */
export const mappedScenarios = [
  ...pair('rental by key', {
    B: { method: 'GET', path: (ctx) => paths.get.B(drawRental(ctx)), check: ({ request, data }) => checkGet('B', request, data) },
    A: { method: 'GET', path: (ctx) => paths.get.A(drawRental(ctx)), check: ({ request, data }) => checkGet('A', request, data) },
  }),
  ...pair(`customer's rentals by date, limit ${LIMIT}`, {
    B: { method: 'GET', path: (ctx) => paths.list.B(drawCustomer(ctx)), check: ({ request, data }) => checkList('B', request, data) },
    A: { method: 'GET', path: (ctx) => paths.list.A(drawCustomer(ctx)), check: ({ request, data }) => checkList('A', request, data) },
  }),
  ...pair('GraphQL customer, 2 rentals, film', {
    B: {
      method: 'POST',
      path: '/graphql',
      body: (ctx) => ({ query: GRAPHQL.B, variables: { id: String(drawCustomer(ctx)) } }),
      check: ({ request, data }) => checkGraphql('B', request, data),
    },
    A: {
      method: 'POST',
      path: '/graphql',
      body: (ctx) => ({ query: GRAPHQL.A, variables: { id: String(drawCustomer(ctx)) } }),
      check: ({ request, data }) => checkGraphql('A', request, data),
    },
  }),
];

