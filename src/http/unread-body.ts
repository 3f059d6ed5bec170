import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A request body answered before it was read whole (a raw upload or a multipart body refused with
 * a 413, 415, 422 or 429, or the last bytes of a multipart body not read yet): the rest is read and
 * dropped (Node dumps no body a handler began to read), and the connection closes once the answer
 * is out (lingering, so the client sees it: http/lingering-close.ts) rather than staying busy with
 * a request half-read.
 */
export function dropUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.complete) return;
  reply.header('connection', 'close');
  request.raw.unpipe();
  request.raw.resume();
}
