// Subscribes to a GraphQL subscription over WebSocket (graphql-ws), prints the first event it
// gets as JSON, and exits; without an event within --timeout seconds (30), it says so and exits 1.
// Usage: node examples/subscribe.mjs '<subscription>' [url] [--timeout 30]
// The token in $TOKEN, if set, is sent in the connection_init payload.
import { createClient } from 'graphql-ws';
import { parseArgs } from 'node:util';
import WebSocket from 'ws'; // Node 20 has no global WebSocket: graphql-ws needs one given

const { values, positionals } = parseArgs({ options: { timeout: { type: 'string', default: '30' } }, allowPositionals: true });
const [query = 'subscription { noteCreated { id title } }', url = 'ws://127.0.0.1:3000/graphql'] = positionals;
const client = createClient({
  url,
  webSocketImpl: WebSocket,
  connectionParams: process.env.TOKEN ? { Authorization: `Bearer ${process.env.TOKEN}` } : {},
  on: { connected: () => console.log('Subscribed; waiting for an event.') },
});
const timeout = setTimeout(() => {
  console.error(`No event within ${values.timeout} s.`);
  process.exitCode = 1;
  void client.dispose();
}, Number(values.timeout) * 1000);
client.subscribe(
  { query },
  {
    next: (result) => {
      console.log(JSON.stringify(result));
      clearTimeout(timeout);
      void client.dispose();
    },
    error: (error) => {
      console.error(error instanceof Error ? error.message : JSON.stringify(error));
      process.exitCode = 1;
      clearTimeout(timeout);
    },
    complete: () => undefined,
  },
);
