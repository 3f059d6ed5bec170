import { prettyFactory } from 'pino-pretty';
import type { AccessLineWriter } from './access-log.js';
import type { LineSink } from './log-destination.js';
import { firstKeyBox, redactedUrl, startBanner, terminalSafe, terminalSafeValues, type StartBanner } from './terminal-text.js';

/** How log lines are written: JSON lines for machines, or readable lines for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

/**
 * The format to write in: the one asked for, else readable lines when the log goes to standard
 * output and that is a terminal, JSON lines otherwise (piped, redirected, in a container without
 * a terminal, or given a destination of the caller's).
 */
export function chosenLogFormat(asked: LogFormat | undefined, destination: unknown): LogFormat {
  if (asked !== undefined) return asked;
  return destination === undefined && process.stdout.isTTY ? 'pretty' : 'json';
}

/** Colours only on a terminal, and not when NO_COLOR is set (https://no-color.org). */
export function coloursWanted(): boolean {
  const noColor = process.env.NO_COLOR;
  return process.stdout.isTTY && (noColor === undefined || noColor === '');
}

const RESET = '\u001b[39m';
const GREEN = '\u001b[32m';
const CYAN = '\u001b[36m';
const YELLOW = '\u001b[33m';
const RED = '\u001b[31m';
const BOLD = '\u001b[1m';
const NORMAL = '\u001b[22m';

/**
 * A log sink for people: each JSON line pino writes is parsed, made safe for a terminal (a
 * client's path or header cannot act on it: terminal-text.ts) and formatted by pino-pretty, in
 * this process, then written out through the batched destination. Lines go out once the current
 * burst of work is done (one write per turn of the event loop), not a second later as JSON
 * lines may: a person watching the terminal sees a request's line as it is answered.
 *
 * This costs some microseconds per line, which is nothing at a developer's terminal; a server
 * under load logs JSON lines (the default whenever standard output is not a terminal).
 */
export class PrettyLogSink implements LineSink {
  readonly #out: LineSink & { flushSync?: () => void };
  readonly #prettify: (line: unknown) => string;
  readonly colours: boolean;
  #flushScheduled = false;

  /** `out`: the batched destination on standard output (or a caller's stream); `colours` for a terminal. */
  constructor(out: LineSink & { flushSync?: () => void }, colours: boolean) {
    this.#out = out;
    this.colours = colours;
    this.#prettify = prettyFactory({ colorize: this.colours, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true });
  }

  /** One JSON line of pino's. */
  write(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    this.writeText(parsed !== null && typeof parsed === 'object' ? this.#prettify(terminalSafeValues(parsed)) : `${terminalSafe(line.trimEnd())}\n`);
  }

  /** Text of restgraph's own, already safe and formatted. */
  writeText(text: string): void {
    this.#out.write(text);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#out.flushSync?.();
    }).unref();
  }

  /** pino's flush hook. */
  flush(callback?: (error?: Error) => void): void {
    try {
      this.#out.flushSync?.();
      callback?.();
    } catch (error) {
      callback?.(error as Error);
    }
  }
}

/** `08:49:22.668`: the time of day, local, as pino-pretty shows it. */
function clockTime(): string {
  const now = new Date();
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  const ms = now.getMilliseconds();
  return `${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}`;
}

function statusColour(status: number): string {
  return status >= 500 ? RED : status >= 400 ? YELLOW : status >= 300 ? CYAN : GREEN;
}

/**
 * The one line per request, for people: `[08:49:22.668] INFO: GET /users 200 1.4ms`. Built
 * directly (the access line is the most frequent line by far), with the URL, whatever the client
 * sent, redacted of credentials and made terminal-safe.
 */
export function prettyAccessWriter(sink: PrettyLogSink, enabled: boolean): AccessLineWriter {
  if (!enabled) return (): void => undefined;
  const colours = sink.colours;
  return (_requestId: string, method: string, url: string, statusCode: number, elapsedMs: number): void => {
    const ms = `${Math.round(elapsedMs * 10) / 10}ms`;
    const path = terminalSafe(redactedUrl(url));
    sink.writeText(
      colours
        ? `[${clockTime()}] ${GREEN}INFO${RESET}: ${CYAN}${method} ${path}${RESET} ${BOLD}${statusColour(statusCode)}${statusCode}${RESET}${NORMAL} ${ms}\n`
        : `[${clockTime()}] INFO: ${method} ${path} ${statusCode} ${ms}\n`,
    );
  };
}

/** The first admin key's box, and how to use the key (without printing it again), for the terminal. */
export function writeFirstKey(sink: PrettyLogSink, key: string, usage: string): void {
  sink.writeText(`${firstKeyBox(key)}\n${terminalSafe(usage)}\n`);
  sink.flush();
}

/** The start banner, for the terminal. */
export function writeStartBanner(sink: PrettyLogSink, banner: StartBanner): void {
  const text = startBanner(banner);
  sink.writeText(`${sink.colours ? `${BOLD}${text.slice(0, text.indexOf('\n'))}${NORMAL}${text.slice(text.indexOf('\n'))}` : text}\n`);
  sink.flush();
}
