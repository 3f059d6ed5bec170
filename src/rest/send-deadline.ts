import type { FastifyReply } from 'fastify';
import type { Readable } from 'node:stream';

/** How long a download's socket may take no bytes before it is closed (`files.sendTimeoutMs`). */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;

/**
 * Closes a file download whose client stopped reading (docs/files.md#download): when the socket
 * has taken no bytes for `ms` while the body is unsent, the socket is destroyed and the file's
 * stream closed, so a client that never reads cannot hold a connection and a file handle.
 */
export function sendDeadline(reply: FastifyReply, stream: Readable, ms: number): void {
  const socket = reply.raw.socket;
  // Injected requests (tests) have no real socket to watch.
  if (socket === null || typeof socket.bytesWritten !== 'number' || ms <= 0) return;
  let sent = socket.bytesWritten;
  const timer = setInterval(() => {
    if (socket.bytesWritten !== sent) {
      sent = socket.bytesWritten;
      return;
    }
    socket.destroy();
    stream.destroy();
  }, ms);
  timer.unref();
  const stop = (): void => clearInterval(timer);
  reply.raw.once('finish', stop).once('close', () => {
    stop();
    stream.destroy();
  });
}
