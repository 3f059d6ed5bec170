import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook endpoint on loopback that keeps every delivery it gets and answers each 200. */
export interface WebhookReceiver {
  /** http://127.0.0.1:<port>; any path is accepted. */
  readonly url: string;
  /** The ids of the records (`data.object.id`) of the deliveries received so far. */
  deliveredIds(): Set<number>;
  close(): Promise<void>;
}

/** Starts a {@link WebhookReceiver} on a free port of 127.0.0.1. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const ids = new Set<number>();
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const id = objectIdOf(text);
      if (id !== undefined) ids.add(id);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveredIds: () => new Set(ids),
    close: () =>
      new Promise((resolve) => {
        // Deliveries still being retried would keep their connections (and the server) open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `data.object.id` of a delivery's JSON body (docs/events.md); undefined for anything else. */
function objectIdOf(text: string): number | undefined {
  try {
    const body = JSON.parse(text) as { data?: { object?: { id?: unknown } } } | null;
    const id = Number(body?.data?.object?.id);
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
