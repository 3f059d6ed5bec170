import { readdirSync, readlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app/build-app.js';
import { discardLogs, tempDir, TEST_ADMIN_TOKEN } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/**
 * A start-up that fails part-way leaves nothing behind: what had started (the database's
 * connections, timers, the rate-limit counters) is closed, whichever part failed. Observed from
 * outside the app: this process's open files and sockets, and its active timers.
 */

/** What this process holds open: file descriptors by target (files, sockets), and active timers. */
function openResources(): { fds: string[]; timers: number } {
  const fds = readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
  return { fds: fds.sort(), timers: process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length };
}

/** A statement hook that fails the first statement matching `pattern`, as a database error would. */
function failing(pattern: RegExp): { onSqlStatement: (sql: string) => void; failed: () => boolean } {
  let failed = false;
  return {
    onSqlStatement: (sql) => {
      if (!failed && pattern.test(sql)) {
        failed = true;
        throw new Error(`injected failure of: ${sql.slice(0, 80)}`);
      }
    },
    failed: () => failed,
  };
}

describe('a start-up that fails part-way', () => {
  const dir = tempDir();
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase(dir.path, `start-up-${String(Date.now())}`);
    // Migrated once, so that each failing start below fails after the migration.
    const app = await buildApp({ databaseUrl: database.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN });
    await app.close();
  });
  afterEach(async () => {
    await database.drop();
  });

  const parts: [string, RegExp][] = [
    // EventDispatcher.start: the newest event id.
    ['the event dispatcher', /max\("id"\).*"_restgraph_events"/],
    // WebhookService.start: the endpoints to look at.
    ['the webhook work', /from "_restgraph_webhooks"/],
  ];
  for (const [part, statement] of parts) {
    it(`when ${part} fails to start, closes what had started (database connections, timers, rate-limit counters)`, async () => {
      // Let this process settle (sockets and timers of the set-up) before counting.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = openResources();
      const fault = failing(statement);
      await expect(
        buildApp({ databaseUrl: database.url, logDestination: discardLogs(), adminToken: TEST_ADMIN_TOKEN, rateLimits: { default: '100/1m' }, onSqlStatement: fault.onSqlStatement }),
      ).rejects.toThrow('injected failure');
      expect(fault.failed()).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Nothing new is open. (Something of an earlier test file in this worker may have closed meanwhile.)
      const after = openResources();
      const left = [...before.fds];
      const added = after.fds.filter((fd) => {
        const at = left.indexOf(fd);
        if (at < 0) return true;
        left.splice(at, 1);
        return false;
      });
      expect(added).toEqual([]);
      expect(after.timers).toBeLessThanOrEqual(before.timers);
    });
  }
});
