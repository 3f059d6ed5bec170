// The HTTP client of the scenarios' checks (bench/run.js, bench/queries.js): one request at a time, JSON.

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
