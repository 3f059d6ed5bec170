import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/** One HTTP request as the chaos scenarios send it: any method, path, headers and raw body. */
export interface ChaosRequest {
  method: string;
  /** Path and query string, sent as they are (not encoded again). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface ChaosResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Connections kept open between requests, as a client under load keeps them. */
export function keepAliveAgent(sockets = 16): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets });
}

/**
 * Sends one request to `base` (http://127.0.0.1:port) and reads the whole response (of an event
 * stream, only its head). Rejects when the connection fails or no complete response arrives within
 * `timeoutMs`.
 */
export function exchange(base: string, req: ChaosRequest, options: { agent?: Agent; timeoutMs?: number } = {}): Promise<ChaosResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    const headers: Record<string, string> = { ...req.headers };
    if (body !== undefined) headers['content-length'] = String(body.length);
    const outgoing = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: options.agent ?? false },
      (response) => {
        // A stream never ends by itself: its status and headers are the answer.
        if (String(response.headers['content-type']).startsWith('text/event-stream')) {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: '' });
          response.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    outgoing.setTimeout(options.timeoutMs ?? 10_000, () => outgoing.destroy(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
