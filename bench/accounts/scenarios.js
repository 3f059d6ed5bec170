// The accounts benchmarks' scenarios (bench/accounts.js), known to bench/load.js by name: sign-in
// with a valid password (Argon2id-bound), and the same get-by-id on `notes` with an account's access
// token (EdDSA JWT) and with an API key; the token's ratio to the key has the target 0.9. The
// credentials are given to each scenario as its headers by bench/accounts.js.
export const BENCH_EMAIL = 'bench@example.com';
export const BENCH_PASSWORD = 'a long bench passphrase 0123';
export const TOKEN_TARGET = 0.9;

const noteId = ({ size, random }) => 1 + Math.floor(random() * size);

/** Notes 1, size/2 and size read back with their titles, and one past the end a 404. */
async function checkGets(request, data) {
  const problems = [];
  const ids = [1, Math.ceil(data.notes.length / 2), data.notes.length];
  for (const id of ids) {
    const res = await request('GET', `/notes/${id}`);
    if (res.status !== 200) problems.push(`GET /notes/${id} -> ${res.status}, expected 200`);
    else if (res.json?.title !== data.notes[id - 1].title) problems.push(`GET /notes/${id}: another row`);
  }
  const missing = await request('GET', `/notes/${data.notes.length + 1}`);
  if (missing.status !== 404) problems.push(`GET /notes/${data.notes.length + 1} -> ${missing.status}, expected 404`);
  return problems;
}

export const accountScenarios = [
  {
    name: 'sign-in',
    method: 'POST',
    path: '/v1/auth/sign-in',
    body: () => ({ email: BENCH_EMAIL, password: BENCH_PASSWORD }),
    check: async ({ request }) => {
      const res = await request('POST', '/v1/auth/sign-in', { email: BENCH_EMAIL, password: BENCH_PASSWORD });
      return res.status === 200 && typeof res.json?.accessToken === 'string' ? [] : [`POST /v1/auth/sign-in -> ${res.status}, expected 200 with an accessToken`];
    },
  },
  {
    name: 'get-by-id (API key)',
    method: 'GET',
    path: (ctx) => `/notes/${noteId(ctx)}`,
    check: ({ request, data }) => checkGets(request, data),
  },
  {
    name: 'get-by-id (access token)',
    method: 'GET',
    path: (ctx) => `/notes/${noteId(ctx)}`,
    versus: 'get-by-id (API key)',
    target: TOKEN_TARGET,
    check: ({ request, data }) => checkGets(request, data),
  },
];
