import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

// Debian's chromium, driven by playwright-core (installed by .ci/run; never a downloaded browser).

export const CHROMIUM = process.env.DRYDOCK_CHROMIUM ?? '/usr/bin/chromium';

/** A headless chromium, or a clear failure when the machine has none. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `chromium not found at ${CHROMIUM}: install Debian's chromium (see .ci/run) or set DRYDOCK_CHROMIUM`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** What hostile content would have set, had any of it run (a string expression: no DOM library here). */
export const pwned = (page: Page): Promise<unknown> => page.evaluate('window.__pwned');

/** Signs `page` in to the web UI at `baseUrl` with `token` and waits for `landing` (default: the queue). */
export async function signInPage(page: Page, baseUrl: string, token: string, landing = '/ui'): Promise<void> {
  const next = landing === '/ui' ? '' : `?next=${encodeURIComponent(landing)}`;
  await page.goto(`${baseUrl}/ui/login${next}`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}${landing}`);
}
