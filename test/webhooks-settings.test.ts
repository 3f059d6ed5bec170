import { describe, expect } from 'vitest';
import { freePort } from './helpers/cli-process.js';
import { helpers, retentionTest } from './helpers/webhook-retention.js';

/** Webhook settings `restgraph serve` (a child process) refuses at start-up. */

const it = retentionTest;

describe.concurrent('webhook settings refused at start-up', () => {
  for (const [name, value] of [
    ['RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', '5,soon'],
    ['RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', '1.5'],
    ['RESTGRAPH_WEBHOOK_TIMEOUT_MS', '50'],
    ['RESTGRAPH_WEBHOOK_DISABLE_AFTER_HOURS', '0'],
    ['RESTGRAPH_EVENT_RETENTION_DAYS', '3651'],
  ] as const) {
    it(`${name}=${value} stops serve with RG_CONFIG_INVALID naming the variable`, async ({ cli }) => {
      const { spawn } = helpers(cli);
      const running = spawn(await freePort(), { [name]: value });
      const exit = await running.exited;
      expect(exit.code).toBe(1);
      expect(running.stderr()).toContain('[RG_CONFIG_INVALID]');
      expect(running.stderr()).toContain(name);
    });
  }
});
