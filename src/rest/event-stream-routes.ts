import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { authorize } from '../core/access-policy.js';
import type { EventDispatcher, Subscription } from '../core/event-dispatcher.js';
import { InvalidQueryError, type ErrorDetail } from '../errors.js';
import { resourceNamed, type SchemaModel } from '../schema/schema-model.js';
import { assertFiltersUsable } from '../core/access-rules/field-reads.js';
import { readFilterExpression, type FilterLimits } from '../core/filter-expression/filter-parser.js';
import { matchesFilter } from '../core/filter-expression/filter-evaluator.js';
import type { FilterCondition } from '../store/list-spec.js';
import type { StoredEvent } from '../store/event-store.js';
import { registerPath } from '../http/path-routes.js';
import type { WatchCredential } from '../auth/credential-recheck.js';

export interface EventStreamOptions {
  /** How often a comment line keeps idle connections (and proxies) open. @default 15000 */
  heartbeatMs: number;
  /** The `retry:` field sent first: how long an EventSource waits before it reconnects. @default 3000 */
  reconnectDelayMs: number;
  /**
   * Watches the stream's credential: a key revoked or expired while a stream is open ends it, as
   * it would refuse the next request.
   */
  watchCredential: WatchCredential;
  /** Counts the streams open (a metrics gauge). */
  openStreams?: { inc(): void; dec(): void };
  /** Bounds on `filter=` expressions (those of lists). */
  filterLimits?: FilterLimits;
}

/** Frames of one event kept for the streams still to get it: the event itself and its views (see frameOf). */
const FRAMES_KEPT = 32;

/** How long a stream being ended may take to flush its last comment before it is cut. */
const END_GRACE_MS = 1000;

/** The wire form of an event, as /v1/events data: `{"id","type","timestamp","data"}`. */
export function eventBody(event: StoredEvent): string {
  return JSON.stringify({ id: String(event.id), type: event.type, timestamp: event.occurredAt, data: event.data });
}

/**
 * `GET /v1/events`: Server-Sent Events of the changes the caller may read, optionally only some
 * types (`?types=user.created,post.deleted`), and of those only the events whose record matches a
 * filter expression (`&filter=status = 'paid'`: needs `types`; read against the resource of each
 * type, so a field must be on all of them; no relation paths: an event carries only its own
 * record). Each event's SSE `id:` is its event id; a client that reconnects with `Last-Event-ID`
 * gets what it missed from the outbox, then live events.
 */
export function registerEventStreamRoutes(app: FastifyInstance, schema: SchemaModel, dispatcher: EventDispatcher, options: EventStreamOptions): void {
  const known = new Map<string, string>();
  for (const resource of schema.resources.values()) {
    for (const kind of ['created', 'updated', 'deleted']) known.set(`${resource.singular}.${kind}`, resource.name);
  }

  registerPath(app, '/v1/events', { GET: (request, reply) => stream(request, reply) }, { produces: 'text/event-stream' });

  /**
   * Each event's SSE frame, encoded once however many streams it goes to: the dispatcher hands an
   * event to every live stream in one go, as each stream's credential may see it (the event itself,
   * or one view per visibility where the rules hide something), so the frames of the last event
   * are kept, and only those (frames of recent events would double the memory the dispatcher bounds),
   * the {@link FRAMES_KEPT} used last (per-subject views, one per stream, share nothing).
   */
  const frames = new LRUCache<StoredEvent, Buffer>({ max: FRAMES_KEPT });
  let lastId = 0;
  const frameOf = (event: StoredEvent): Buffer => {
    if (lastId !== event.id) {
      lastId = event.id;
      frames.clear();
    }
    let frame = frames.get(event);
    if (frame === undefined) {
      // In UTF-8 once: each stream's write then only copies the bytes.
      frame = Buffer.from(`id: ${event.id}\nevent: ${event.type}\ndata: ${eventBody(event)}\n\n`, 'utf8');
      frames.set(event, frame);
    }
    return frame;
  };

  async function stream(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = request.query as Record<string, string | string[] | undefined>;
    const problems: ErrorDetail[] = [];
    for (const name of Object.keys(query)) {
      if (name !== 'types' && name !== 'lastEventId' && name !== 'filter') problems.push({ parameter: name, detail: 'is not a parameter of the event stream (it takes types, filter and lastEventId)' });
    }
    let types: Set<string> | undefined;
    if (query.types !== undefined) {
      types = new Set();
      for (const part of [query.types].flat().join(',').split(',')) {
        const type = part.trim();
        if (type === '') continue;
        if (!known.has(type)) problems.push({ parameter: 'types', detail: `"${type.slice(0, 100)}" is not an event type (they are ${[...known.keys()].join(', ')})` });
        else types.add(type);
      }
      if (types.size === 0 && problems.length === 0) problems.push({ parameter: 'types', detail: 'names no event type' });
    }
    // EventSource sends Last-Event-ID when it reconnects; lastEventId serves clients that cannot set headers.
    const header = request.headers['last-event-id'];
    const given = header ?? query.lastEventId;
    let afterId: number | undefined;
    if (given !== undefined) {
      const text = [given].flat().join(',').trim();
      const where = header === undefined ? { parameter: 'lastEventId' } : { header: 'Last-Event-ID' };
      if (!/^\d{1,15}$/.test(text)) problems.push({ ...where, detail: 'must be an event id (a non-negative integer)' });
      else afterId = Number(text);
    }
    const conditions = query.filter === undefined ? undefined : filtersOfTypes([query.filter].flat().join(','), types, problems);
    if (problems.length > 0) throw new InvalidQueryError(problems.map((p) => p.detail).join('; '), { errors: problems });
    // Asking for a type the token may not read is refused now, not answered with silence.
    for (const type of types ?? []) {
      const resource = schema.resources.get(known.get(type) ?? '');
      if (resource !== undefined) authorize(request.principal, resource, 'read');
    }
    // As is a filter on a field it may not read on every row (which events arrive would tell what it holds).
    for (const [name, condition] of conditions ?? []) assertFiltersUsable(request.principal, schema, resourceNamed(schema, name), [condition]);

    const headers = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    };
    // HEAD: the headers a stream would have, and no stream.
    if (request.method === 'HEAD') return reply.headers(headers).send();
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...headers, connection: 'keep-alive' });
    // When to reconnect (3 s by default); the comment tells the client the stream is open.
    raw.write(`retry: ${options.reconnectDelayMs}\n: connected; last event id ${dispatcher.lastId}\n\n`);
    const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), options.heartbeatMs);
    heartbeat.unref();
    let ended = false;
    // Assigned once below; `end` may run inside subscribe() itself (a stopping server), before it is.
    // eslint-disable-next-line prefer-const
    let subscription: Subscription | undefined;
    options.openStreams?.inc();
    const end = (comment?: string): void => {
      if (ended) return;
      ended = true;
      options.openStreams?.dec();
      clearInterval(heartbeat);
      unwatch?.();
      subscription?.unsubscribe();
      if (comment === undefined || !raw.writable) {
        raw.destroy();
        return;
      }
      // A client that does not read would keep the connection (and its buffer) forever.
      raw.end(`: ${comment}\n\n`);
      setTimeout(() => raw.destroy(), END_GRACE_MS).unref();
    };
    const authorization = request.headers.authorization;
    const unwatch = authorization === undefined ? undefined : options.watchCredential(authorization, request.principal, () => end('the credential of this stream is no longer valid'));
    subscription = dispatcher.subscribe(
      {
        principal: request.principal,
        ...(types === undefined ? {} : { types }),
        // Backpressure: when the socket buffer is full, delivery pauses until it drains.
        deliver: (event) => {
          // An event the filter does not match is passed over (and costs the stream nothing).
          const condition = conditions?.get(event.resource);
          if (condition !== undefined && !matchesFilter(condition, event.data.object)) return true;
          return raw.write(frameOf(event));
        },
        close: (reason) => end(reason === 'shutdown' ? 'server shutting down; reconnect with Last-Event-ID' : 'disconnected: too far behind; reconnect with Last-Event-ID'),
      },
      afterId,
    );
    raw.on('drain', () => subscription.resume());
    raw.on('close', () => end());
    return reply;
  }

  /**
   * The condition of `filter=` for each resource the event types name (read once per resource);
   * its problems (a missing `types`, a field not on every resource, a relation path) join `problems`.
   */
  function filtersOfTypes(text: string, types: ReadonlySet<string> | undefined, problems: ErrorDetail[]): Map<string, FilterCondition> | undefined {
    if (types === undefined) {
      problems.push({ parameter: 'filter', detail: 'needs types: the event types whose records it tests (their fields are those of one or more resources)' });
      return undefined;
    }
    const conditions = new Map<string, FilterCondition>();
    for (const type of types) {
      const resource = schema.resources.get(known.get(type) ?? '');
      if (resource === undefined || conditions.has(resource.name)) continue;
      // No relation resources: a path reads rows an event does not carry.
      const reading = readFilterExpression(text, resource, undefined, options.filterLimits);
      if (reading.problem !== undefined) {
        const relation = /^unknown field "([^"]*)"/.exec(reading.problem)?.[1];
        const detail = relation !== undefined && resource.relations.has(relation)
          ? `relation paths ("${relation}" at ${reading.offset}) cannot be followed in the event stream: an event carries only its own record`
          : reading.problem;
        problems.push({ parameter: 'filter', detail: types.size > 1 ? `${detail} (for ${type}: the filter must apply to the records of every type given)` : detail, offset: reading.offset });
        return undefined;
      }
      conditions.set(resource.name, reading.condition);
    }
    return conditions;
  }
}
