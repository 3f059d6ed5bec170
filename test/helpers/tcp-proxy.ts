import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server, that can go silent: frozen, it stops passing
 * bytes either way (connections stay open, new ones are accepted and get nothing), as a network
 * partition or a hung server would look to a client. Thawed, bytes flow again.
 */
export class TcpProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #frozen = false;

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Proxies 127.0.0.1:<a free port> to `host:port`. */
  static async start(host: string, port: number): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (client) => proxy.#pipe(client, connect(port, host)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const address = this.#server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  /** Stops passing bytes. */
  freeze(): void {
    this.#frozen = true;
    for (const socket of this.#sockets) socket.pause();
  }

  /** Passes bytes again. */
  thaw(): void {
    this.#frozen = false;
    for (const socket of this.#sockets) socket.resume();
  }

  /** Drops every open connection (as a restarted proxy or a lost network would); new ones are accepted as before. */
  cut(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #pipe(client: Socket, upstream: Socket): void {
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      this.#sockets.add(from);
      if (this.#frozen) from.pause();
      from.on('data', (chunk) => to.write(chunk));
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.#sockets.delete(from);
        to.destroy();
      });
    }
  }
}
