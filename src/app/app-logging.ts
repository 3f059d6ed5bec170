import pino from 'pino';
import type { LogLevel } from './app-options.js';
import { accessLogWriter, isoTimestamp, type AccessLineWriter } from './access-log.js';
import { BatchedLogDestination } from './log-destination.js';
import { chosenLogFormat, coloursWanted, PrettyLogSink, prettyAccessWriter, writeFirstKey, writeStartBanner, type LogFormat } from './pretty-log.js';
import type { StartBanner } from './terminal-text.js';

/** An app's logging: pino for every line but the access lines, which are built apart (access-log.ts). */
export interface AppLogging {
  logger: pino.Logger;
  /** Writes a request's one access line (nothing when the level is above info). */
  writeAccessLine: AccessLineWriter;
  /**
   * For a person at a terminal (the readable format): shows the first admin key in a box, with
   * how to use it. Undefined for JSON lines, which carry the key in two warnings instead.
   */
  showFirstKey: ((key: string, usage: string) => void) | undefined;
  /** For a person at a terminal: shows the start banner (where the server, its console and docs are). Undefined for JSON lines. */
  showStartBanner: ((banner: StartBanner) => void) | undefined;
  /** Stops the periodic flush (the app closes). */
  stop: () => void;
}

/**
 * pino on the given destination (standard output, batched, by default), lines flushed at least
 * once a second: the destination gathers lines for throughput, and a quiet server must still
 * show them promptly. In the readable format (pretty-log.ts), the lines are formatted for a
 * person before they are batched.
 */
export function createAppLogging(level: LogLevel, destination: NodeJS.WritableStream | undefined, format?: LogFormat): AppLogging {
  const lines = destination ?? new BatchedLogDestination(1);
  const pretty = chosenLogFormat(format, destination) === 'pretty' ? new PrettyLogSink(lines, destination === undefined && coloursWanted()) : undefined;
  const out = pretty ?? lines;
  const logger = pino(
    {
      level,
      timestamp: isoTimestamp,
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    },
    out,
  );
  const flushTimer = setInterval(() => logger.flush(), 1000);
  flushTimer.unref();
  const info = logger.isLevelEnabled('info');
  return {
    logger,
    writeAccessLine: pretty === undefined ? accessLogWriter(out, info) : prettyAccessWriter(pretty, info),
    showFirstKey: pretty === undefined ? undefined : (key, usage) => writeFirstKey(pretty, key, usage),
    showStartBanner: pretty === undefined || !info ? undefined : (banner) => writeStartBanner(pretty, banner),
    stop: () => clearInterval(flushTimer),
  };
}
