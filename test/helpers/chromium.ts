import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, driven through playwright-core (never a downloaded browser). */
const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether the browser tests can run. Without Chromium they are skipped with a loud message, except
 * under CI, where .ci/run installs it and its absence is a failure.
 */
export function chromiumAvailable(what: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium for the browser tests`);
  console.warn(`\n*** SKIPPING the ${what} browser test: ${CHROMIUM} is not installed (apt-get install chromium) ***\n`);
  return false;
}

/** Headless Chromium with nothing of its own on the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Saves a screenshot of the page as a test artifact, test-results/<name>. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  const dir = join(import.meta.dirname, '..', '..', 'test-results');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name) });
}
