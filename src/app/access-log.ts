import { hostname } from 'node:os';
import type { FastifyRequest } from 'fastify';
import type { RequestMetrics } from './request-metrics.js';
import { NOT_ASCII, type LineSink } from './log-destination.js';
import { redactedUrl } from './terminal-text.js';

let lastSecond = -1;
let secondPrefix = '';
let lastMs = -1;
let lastTimestamp = '';

/**
 * pino's ISO timestamp field. The date and time down to the second are formatted once a second,
 * the milliseconds appended: busy servers log many lines in each second.
 */
export function isoTimestamp(): string {
  const now = Date.now();
  if (now !== lastMs) {
    const second = Math.floor(now / 1000);
    if (second !== lastSecond) {
      lastSecond = second;
      secondPrefix = `,"time":"${new Date(second * 1000).toISOString().slice(0, 20)}`;
    }
    const ms = now - second * 1000;
    lastMs = now;
    lastTimestamp = `${secondPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
  }
  return lastTimestamp;
}

/** Writes a request's one access line. */
export type AccessLineWriter = (requestId: string, method: string, url: string, statusCode: number, elapsedMs: number) => void;

const BASE_FIELDS = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

/**
 * The one log line per request, in exactly the shape pino writes (level, time, pid, hostname, then
 * the fields), built as a string: it is the most frequent line by far, and pino's generic
 * serialisation cost a tenth of a simple read's throughput. The line is ASCII whatever the URL
 * (see {@link asciiJson}), so a batching sink copies it out without encoding it. Credentials in
 * the URL's query (an email link's `token=`) are left out: see {@link redactedUrl}.
 */
export function accessLogWriter(destination: LineSink, enabled: boolean): AccessLineWriter {
  if (!enabled) return (): void => undefined;
  const write = destination.writeAscii?.bind(destination) ?? destination.write.bind(destination);
  return (requestId: string, method: string, url: string, statusCode: number, elapsedMs: number): void => {
    const durationMs = Math.round(elapsedMs * 100) / 100;
    // The request id (checked against REQUEST_ID or generated) and the method (an HTTP token, as
    // Node's parser enforces) are ASCII and need no JSON escaping; the URL needs both.
    write(
      `{"level":30${isoTimestamp()},${BASE_FIELDS},"requestId":"${requestId}","method":"${method}",` +
        `"url":${asciiJson(redactedUrl(url))},"statusCode":${statusCode},"durationMs":${durationMs},"msg":"request"}\n`,
    );
  };
}

const NOT_ASCII_ALL = new RegExp(NOT_ASCII.source, 'g');

/**
 * A string as JSON text in ASCII: what JSON.stringify writes, with every other character as a
 * \uXXXX escape (the same string to any JSON reader). Node's parser lets URL bytes beyond ASCII
 * through, as Latin-1 characters.
 */
export function asciiJson(text: string): string {
  const json = JSON.stringify(text);
  return NOT_ASCII.test(json) ? json.replace(NOT_ASCII_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

/**
 * What happens when a request has been answered (the onResponse hook tells, with its status and
 * how long it took): its one log line, with what an operator needs and nothing secret, and its
 * request metrics, labelled by route pattern (`/users/:id`), never by URL, so that the label
 * values stay few.
 */
export function requestReporter(write: AccessLineWriter, requests: RequestMetrics | undefined) {
  return (request: FastifyRequest, statusCode: number, elapsedMs: number): void => {
    write(request.id, request.method, request.url, statusCode, elapsedMs);
    requests?.record(request.routePattern ?? request.routeOptions.url, request.method, statusCode, elapsedMs);
  };
}
