// The HTTP client of the scenarios' checks (bench/run.js, bench/queries.js, bench/rules.js): one request at a time, JSON.

/** A tiny HTTP client for the scenario checks. */
export function requester(url, serverHeaders = {}) {
  return async (method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: { ...serverHeaders, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json };
  };
}

/** Checks that GET `path` answers 200 with the rows of ids `expected`, in that order; resolves to the problems (none: []). */
export async function sameIds(request, path, expected) {
  const res = await request('GET', path);
  if (res.status !== 200 || !Array.isArray(res.json)) return [`GET ${path} -> ${res.status} ${JSON.stringify(res.json)?.slice(0, 200)}`];
  const got = res.json.map((r) => r.id).join(',');
  return got === expected.join(',') ? [] : [`GET ${path}: ids ${got.slice(0, 80)}, expected ${expected.join(',').slice(0, 80)}`];
}
