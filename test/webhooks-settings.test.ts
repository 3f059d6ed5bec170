import { describe, expect, test } from 'vitest';
import { optionsFromEnv } from '../src/app/options-from-env.js';
import { freePort } from './helpers/cli-process.js';
import { helpers, retentionTest } from './helpers/webhook-retention.js';

/** Webhook settings `restgraph serve` (a child process) refuses at start-up. */

const it = retentionTest;

describe.concurrent('webhook settings refused at start-up', () => {
  for (const [name, value] of [
    ['RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', '5,soon'],
    ['RESTGRAPH_WEBHOOK_RETRY_SCHEDULE', '1.5'],
    ['RESTGRAPH_WEBHOOK_TIMEOUT_MS', '50'],
    ['RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS', '99'],
    ['RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS', '600001'],
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

describe('RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS', () => {
  test('is read in milliseconds, from 100 to 600,000; unset, the default (5 s) applies', () => {
    expect(optionsFromEnv({ RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS: '100' }).webhooks?.leaseMarginMs).toBe(100);
    expect(optionsFromEnv({ RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS: '600000' }).webhooks?.leaseMarginMs).toBe(600_000);
    expect(optionsFromEnv({}).webhooks?.leaseMarginMs).toBeUndefined();
    for (const value of ['99', '0', '1.5', 'soon', '-1']) expect(() => optionsFromEnv({ RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS: value })).toThrow(/RESTGRAPH_WEBHOOK_LEASE_MARGIN_MS/);
  });
});
