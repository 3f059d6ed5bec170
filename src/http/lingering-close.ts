import { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long and how much a lingering close may read and discard after its response. */
export interface LingerLimits {
  /** Longest time the connection stays open after the response. */
  maxMs: number;
  /** Most bytes read and discarded after the response. */
  maxBytes: number;
}

/** The lingering bounds of a server: 16 MiB, and the request timeout up to 5 s. */
export function lingerLimits(requestTimeoutMs: number): LingerLimits {
  return { maxMs: Math.min(5_000, requestTimeoutMs), maxBytes: 16 * 1024 * 1024 };
}

/**
 * Closes the connection of a request answered before its body was read (a 413, say) as RFC 9112,
 * section 9.6 says: the response goes out whole, then the server half-closes (FIN) and goes on
 * reading and discarding what the client still sends, until the client closes or a bound is
 * reached. Closing at once instead, with the client's bytes still arriving, makes the server's
 * TCP answer them with a reset, which can destroy the response before the client reads it: a
 * client that sends its whole body before reading (most do) saw only "connection reset".
 *
 * Does nothing for a request already read whole, one whose connection was not to be closed, or
 * one that came without a socket (app.inject).
 */
export function closeLingering(request: FastifyRequest, reply: FastifyReply, limits: LingerLimits): void {
  const socket = request.raw.socket;
  // Only where Fastify asks for "Connection: close" (a body parser failed, or the server drains).
  // Elsewhere Node keeps the connection and reads the unread body itself, within the request timeout.
  if (request.raw.complete || reply.getHeader('connection') !== 'close' || !(socket instanceof Socket)) return;
  // The response keeps its "Connection: close", so the client sends nothing more on this
  // connection. Node ends such a response's connection with socket.destroySoon(): a FIN, then
  // destroy as soon as it is flushed, which resets a client still sending. This socket lingers
  // instead.
  socket.destroySoon = () => lingerThenClose(socket, limits);
}

/** Half-closes `socket` and reads and discards what still arrives, within `limits`, until the client closes. */
function lingerThenClose(socket: Socket, limits: LingerLimits): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), limits.maxMs);
  timer.unref();
  // Node's HTTP parser reads the socket itself and drops a dumped body without a JS event, so
  // what arrives is measured by the socket's byte count, every 20 ms (at loopback speed the
  // bound may be passed by what 20 ms bring).
  const readBefore = socket.bytesRead;
  const meter = setInterval(() => {
    if (socket.bytesRead - readBefore > limits.maxBytes) socket.destroy();
  }, 20);
  meter.unref();
  socket.once('close', () => {
    clearTimeout(timer);
    clearInterval(meter);
  });
  socket.end();
}
