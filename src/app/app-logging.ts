import pino from 'pino';
import type { LogLevel } from './app-options.js';
import { accessLogWriter, isoTimestamp } from './access-log.js';
import { BatchedLogDestination } from './log-destination.js';

/** An app's logging: pino for every line but the access lines, which are built apart (access-log.ts). */
export interface AppLogging {
  logger: pino.Logger;
  /** Writes a request's one access line (nothing when the level is above info). */
  writeAccessLine: ReturnType<typeof accessLogWriter>;
  /** Stops the periodic flush (the app closes). */
  stop: () => void;
}

/**
 * pino on the given destination (standard output, batched, by default), lines flushed at least
 * once a second: the destination gathers lines for throughput, and a quiet server must still
 * show them promptly.
 */
export function createAppLogging(level: LogLevel, destination: NodeJS.WritableStream | undefined): AppLogging {
  const out = destination ?? new BatchedLogDestination(1);
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
  return { logger, writeAccessLine: accessLogWriter(out, logger.isLevelEnabled('info')), stop: () => clearInterval(flushTimer) };
}
