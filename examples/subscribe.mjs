// Subscribes to a GraphQL subscription over WebSocket (graphql-ws), prints the first event it
// gets as JSON, and exits. Usage: node examples/subscribe.mjs '<subscription>' [url]
// The token in $TOKEN, if set, is sent in the connection_init payload.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node 20 has no global WebSocket: graphql-ws needs one given

const [query = 'subscription { noteCreated { id title } }', url = 'ws://127.0.0.1:3000/graphql'] = process.argv.slice(2);
const client = createClient({
  url,
  webSocketImpl: WebSocket,
  connectionParams: process.env.TOKEN ? { Authorization: `Bearer ${process.env.TOKEN}` } : {},
  on: { connected: () => console.log('Subscribed; waiting for an event.') },
});
client.subscribe(
  { query },
  {
    next: (result) => {
      console.log(JSON.stringify(result));
      void client.dispose();
    },
    error: (error) => {
      console.error(error instanceof Error ? error.message : JSON.stringify(error));
      process.exitCode = 1;
    },
    complete: () => undefined,
  },
);
