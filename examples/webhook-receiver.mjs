// A webhook receiver for trying restgraph's webhooks on this machine: it checks each delivery's
// Standard Webhooks signature with the endpoint's secret in $WEBHOOK_SECRET (verify-webhook.mjs),
// prints the delivery, answers 204, and exits after the number of deliveries asked for; if they
// have not all come within --timeout seconds (30), it says so and exits 1.
// Usage: WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.mjs [--port 4000] [--count 1] [--timeout 30]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { verifyWebhook } from './verify-webhook.mjs';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '4000' }, count: { type: 'string', default: '1' }, timeout: { type: 'string', default: '30' } },
});
const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) throw new Error('Set WEBHOOK_SECRET to the endpoint\'s secret (whsec_…).');
let left = Number(values.count);

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    const valid = verifyWebhook(secret, request.headers, body);
    console.log(`${request.method} ${request.url} ${String(request.headers['webhook-id'])}, signature ${valid ? 'valid' : 'INVALID'}: ${body.toString('utf8')}`);
    response.writeHead(valid ? 204 : 401).end();
    if (--left <= 0) {
      clearTimeout(timeout);
      server.close();
    }
  });
});
const timeout = setTimeout(() => {
  console.error(`No delivery within ${values.timeout} s.`);
  process.exitCode = 1;
  server.close();
  server.closeAllConnections();
}, Number(values.timeout) * 1000);
server.listen(Number(values.port), '127.0.0.1', () => console.log(`Receiving webhooks on http://127.0.0.1:${values.port}/`));
