import { createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP server that speaks just enough of the PostgreSQL protocol to ask for a password the
 * SCRAM-SHA-256 way (AuthenticationSASL, then AuthenticationSASLContinue with a server-first
 * message), as a server whose role needs a password does. It never finishes the exchange and never
 * closes a connection itself: a client that is refused by node-postgres itself (no password in the
 * URL: "client password must be a string") or that sends a proof has to let go on its own. (The
 * machine's PostgreSQL trusts 127.0.0.1, so it cannot be made to ask.)
 */
export interface PasswordAskingServer {
  port: number;
  /** Connections open now: a client that failed but kept its socket shows here. */
  openConnections(): number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;

export async function startPasswordAskingServer(): Promise<PasswordAskingServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let started = false;
    const authentication = (code: number, data: Buffer): void => {
      const message = Buffer.alloc(9 + data.length);
      message.write('R', 0, 'latin1');
      message.writeInt32BE(8 + data.length, 1);
      message.writeInt32BE(code, 5);
      data.copy(message, 9);
      socket.write(message);
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          // The start-up packet (or an SSL request) has no type byte: its length, then a code.
          if (buffered.length < 8 || buffered.length < buffered.readInt32BE(0)) return;
          const code = buffered.readInt32BE(4);
          buffered = buffered.subarray(buffered.readInt32BE(0));
          if (code === SSL_REQUEST) {
            socket.write('N');
            continue;
          }
          started = true;
          authentication(10, Buffer.from('SCRAM-SHA-256\0\0', 'latin1'));
          continue;
        }
        if (buffered.length < 5 || buffered.length < buffered.readInt32BE(1) + 1) return;
        const type = String.fromCharCode(buffered[0] ?? 0);
        const body = buffered.subarray(5, buffered.readInt32BE(1) + 1);
        buffered = buffered.subarray(buffered.readInt32BE(1) + 1);
        if (type === 'p') {
          // SASLInitialResponse: answer with the server-first message for the client's nonce.
          const nonce = /r=([^,\0]+)/.exec(body.toString('latin1'))?.[1] ?? '';
          authentication(11, Buffer.from(`r=${nonce}server,s=${Buffer.from('salt-of-test').toString('base64')},i=4096`, 'latin1'));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    openConnections: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
