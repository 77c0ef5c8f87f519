import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium package: the browser tests use it, never a downloaded browser. */
export const kChromiumPath = '/usr/bin/chromium';

const kFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A page in a fresh headless Chromium that records every request, console error, dialog and page error. */
export interface WatchedBrowser {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for (file:// included). */
  requests: string[];
  /** URLs that were neither file:// nor an allowed origin: aborted, and a test asserts there are none. */
  blocked: string[];
  consoleErrors: string[];
  dialogs: string[];
  close(): Promise<void>;
}

/**
 * Starts Chromium with a fresh profile. A browser that cannot start fails the test with
 * what to do: the browser tests are never skipped (CI installs `chromium`, see .ci/run).
 * `allowedOrigins` are the loopback servers a test starts; every other request is aborted.
 */
export async function openBrowser(allowedOrigins: readonly string[] = []): Promise<WatchedBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'csv-wave-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: kChromiumPath,
      headless: true,
      args: kFlags,
      viewport: { width: 1400, height: 900 },
    });
  } catch (error) {
    throw new Error(
      `Chromium could not start from ${kChromiumPath} (install Debian's package: apt-get install -y chromium): ${(error as Error).message}`,
    );
  }
  const requests: string[] = [];
  const blocked: string[] = [];
  const allowed = (url: string) => url.startsWith('file://') || allowedOrigins.some((origin) => url.startsWith(`${origin}/`) || url === origin);
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (request) => {
    requests.push(request.url());
    if (!allowed(request.url()) && !blocked.includes(request.url())) blocked.push(request.url());
  });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page, requests, blocked, consoleErrors, dialogs, close: () => context.close() };
}
