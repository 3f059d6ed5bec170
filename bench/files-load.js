// Load worker of the file benchmarks (bench/files.js): one autocannon run against one URL, the
// same 1 MB body on every upload, pinned by the harness to the load CPU; prints the result as one
// JSON line: { requests: req/s, bytes: response bytes/s, non2xx, errors }.
//   node bench/files-load.js '{"url":"http://127.0.0.1:PORT/path","method":"PUT","bodyBytes":1048576,
//     "contentType":"application/octet-stream","headers":{},"connections":8,"duration":10}'
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
const body = spec.bodyBytes > 0 ? randomBytes(spec.bodyBytes) : undefined;
const result = await autocannon({
  url: spec.url,
  method: spec.method,
  headers: { ...spec.headers, ...(body === undefined ? {} : { 'content-type': spec.contentType }) },
  ...(body === undefined ? {} : { body }),
  connections: spec.connections,
  duration: spec.duration,
  timeout: 30,
});
process.stdout.write(`${JSON.stringify({ requests: result.requests.average, bytes: result.throughput.average, non2xx: result.non2xx, errors: result.errors + result.timeouts })}\n`);
