import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * A page of its own (a context of its own: its own sessionStorage) at the admin console of
 * `origin`, at `hash`, signed in with `token`, once the console's navigation shows. Page errors
 * and the console's own errors are added to `problems`.
 */
export async function openSignedIn(browser: Browser, options: { origin: string; token: string; hash: string; problems: string[]; height?: number }): Promise<Page> {
  const { origin, token, hash, problems, height = 800 } = options;
  const context = await browser.newContext({ viewport: { width: 1280, height } });
  const page = await context.newPage();
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => {
    // The browser logs every 4xx a fetch gets as "Failed to load resource"; the console's own errors are anything else.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  await page.goto(`${origin}/admin${hash}`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor({ timeout: 15_000 });
  return page;
}

/** Polls `check` until it holds (15 s at most); `waitForFunction` would evaluate a string, which the page's CSP forbids. */
export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    expect(tries, what).toBeLessThan(300);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
