import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The server's connections on which no byte has arrived yet: a client's spare, opened ahead of a
 * request it may never send (Node's fetch, undici, opens one whenever a request is aborted, as an
 * EventSource or a graphql-sse client closing a stream does; browsers preconnect). Node's
 * closeIdleConnections() leaves them open (only connections between two requests count as idle),
 * so closing the server would wait until the client gives them up (undici: 4 s later), and a
 * draining `restgraph serve` until its drain timeout. No request has begun on them: closing the
 * server ends them.
 */
export class UnusedConnections {
  readonly #sockets = new Set<Socket>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  /** Ends the connections that have received nothing yet. */
  close(): void {
    for (const socket of this.#sockets) if (socket.bytesRead === 0) socket.destroy();
  }
}
