// A burst of creates (bench/events.js, realtime window d): `count` POST /users, `concurrency` at a
// time over keep-alive connections, spread round-robin over `urls`, as fast as the server answers.
// Prints {requests, seconds, reqPerSec, non2xx, errors} as one JSON line.
//
//   node bench/burst.js '{"urls":["http://127.0.0.1:PORT"],"token":"…","count":20000,"concurrency":16}'
import { pool, requester } from './lib/subscribers.js';

const spec = JSON.parse(process.argv[2]);
const requests = spec.urls.map((url) => requester(url, spec.token));
const runId = Date.now().toString(36);
let non2xx = 0;
let errors = 0;
const t0 = performance.now();
await pool(spec.count, spec.concurrency, async (k) => {
  try {
    const res = await requests[k % requests.length]('POST', '/users', { name: `burst-${runId}-${k}`, email: `burst-${runId}-${k}@example.com` });
    if (res.status !== 201) non2xx++;
  } catch {
    errors++;
  }
});
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(`${JSON.stringify({ requests: spec.count, seconds, reqPerSec: spec.count / seconds, non2xx, errors })}\n`);
