/**
 * A tail of `GET /v1/events` read with fetch() (EventSource cannot send an Authorization header)
 * and a small Server-Sent Events parser. When the stream drops, it reconnects after the server's
 * `retry:` delay with `Last-Event-ID`, so the server replays what was missed, and says so.
 */

export interface StreamEvent {
  id: string;
  type: string;
  timestamp: string;
  data: { object: unknown; previous?: unknown };
}

export interface TailListener {
  event(event: StreamEvent): void;
  /** What the tail is doing, in words. */
  status(text: string): void;
  /** The server refused the stream (a problem's detail); the tail stops. */
  refused(detail: string): void;
}

/** One SSE frame's fields (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation). */
interface Frame {
  id?: string;
  event?: string;
  data: string[];
  retry?: number;
}

/** Splits a stream of text into frames, keeping an unfinished line for the next chunk. */
export class SseParser {
  #buffer = '';
  #frame: Frame = { data: [] };

  push(text: string, onFrame: (frame: Frame) => void, onComment?: (comment: string) => void): void {
    this.#buffer += text;
    const lines = this.#buffer.split(/\r\n|\r|\n/);
    this.#buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (this.#frame.data.length > 0 || this.#frame.id !== undefined || this.#frame.retry !== undefined) onFrame(this.#frame);
        this.#frame = { data: [] };
        continue;
      }
      if (line.startsWith(':')) {
        onComment?.(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') this.#frame.data.push(value);
      else if (field === 'id') this.#frame.id = value;
      else if (field === 'event') this.#frame.event = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.#frame.retry = Number(value);
    }
  }
}

export class EventTail {
  readonly #authorization: Record<string, string>;
  readonly #types: readonly string[];
  readonly #listener: TailListener;
  #controller: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #retryMs = 3000;
  #lastId: string | undefined;
  #stopped = false;

  constructor(authorization: Record<string, string>, types: readonly string[], listener: TailListener, lastId?: string) {
    this.#authorization = authorization;
    this.#types = types;
    this.#listener = listener;
    this.#lastId = lastId;
  }

  /** The id of the last event received (where a resumed stream starts after). */
  get lastId(): string | undefined {
    return this.#lastId;
  }

  start(resumed: 'resume' | 'reconnect' | 'start' = 'start'): void {
    this.#stopped = false;
    void this.#run(resumed);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#controller?.abort();
  }

  async #run(why: 'resume' | 'reconnect' | 'start'): Promise<void> {
    const controller = new AbortController();
    this.#controller = controller;
    const url = this.#types.length === 0 ? '/v1/events' : `/v1/events?types=${this.#types.map(encodeURIComponent).join(',')}`;
    const headers: Record<string, string> = { accept: 'text/event-stream', ...this.#authorization };
    if (this.#lastId !== undefined) headers['last-event-id'] = this.#lastId;
    try {
      const response = await fetch(url, { headers, credentials: 'omit', cache: 'no-store', signal: controller.signal });
      if (!response.ok || response.body === null) {
        let detail = `The server answered ${response.status}.`;
        try {
          detail = `${((await response.json()) as { detail?: string }).detail ?? detail} (${response.status})`;
        } catch {
          // Not a problem document: its status says enough.
        }
        // A refused stream (401, 403, 400) is not retried: the same request would be refused again.
        if (response.status < 500) {
          this.#stopped = true;
          this.#listener.refused(detail);
          return;
        }
        throw new Error(detail);
      }
      const since = this.#lastId === undefined ? '' : ` with Last-Event-ID ${this.#lastId}: events after it are replayed, none missed`;
      this.#listener.status(why === 'reconnect' ? `Connection dropped; reconnected${since}.` : why === 'resume' ? `Resumed${since}.` : 'Connected: waiting for events.');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value, (frame) => {
          if (frame.retry !== undefined) this.#retryMs = frame.retry;
          if (frame.data.length === 0) return;
          if (frame.id !== undefined) this.#lastId = frame.id;
          try {
            this.#listener.event(JSON.parse(frame.data.join('\n')) as StreamEvent);
          } catch {
            // A frame that is not an event (none are sent today): skipped.
          }
        }, (comment) => {
          // ": connected; last event id 10": where a reconnect resumes when no event came yet.
          const start = /^connected; last event id (\d+)$/.exec(comment)?.[1];
          if (start !== undefined) this.#lastId ??= start;
        });
      }
      throw new Error('the stream ended');
    } catch (error) {
      if (this.#stopped || controller.signal.aborted) return;
      const reason = error instanceof Error ? error.message : String(error);
      this.#listener.status(`Connection dropped (${reason}); reconnecting in ${Math.round(this.#retryMs / 100) / 10} s${this.#lastId === undefined ? '' : ` with Last-Event-ID ${this.#lastId}`}…`);
      this.#timer = setTimeout(() => {
        if (!this.#stopped) void this.#run('reconnect');
      }, this.#retryMs);
    }
  }
}
