import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openBrowser, type WatchedBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { hostileReportSession, kMarkupColumn } from '../helpers/hostile-report-session.js';
import { startRequestRecorder, type RequestRecorder } from '../helpers/request-recorder.js';
import { serve, stop, type ServedSession } from '../helpers/serve-cli.js';

/**
 * report.html of a session an attacker wrote (every file the report reads, and the folder's
 * name), opened in Chromium from file:// and through `csv-wave serve`: no script of the
 * session runs, nothing is loaded, and the page shows the texts as they were written.
 */
let recorder: RequestRecorder;
let session: ReturnType<typeof hostileReportSession>;

beforeAll(async () => {
  recorder = await startRequestRecorder();
  session = hostileReportSession(recorder.origin);
  const report = await runCli('report', session.dir);
  expect(report.code, report.stderr).toBe(0);
});

afterAll(async () => {
  await recorder?.close();
});

const kIds = ['H1', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

/** Clicks through every view, every task's details and every failure chip, as a reader would. */
async function readEverything(watched: WatchedBrowser): Promise<void> {
  const { page } = watched;
  await page.waitForSelector('body[data-ready="true"]');
  for (const view of ['dag', 'timeline', 'failures', 'tasks']) await page.click(`#tab-${view}`);
  for (const id of kIds) {
    await page.click(`.trow[data-id="${id}"]`);
    await page.waitForSelector(`#detail[data-task="${id}"]`);
  }
  await page.click('#tab-failures');
  for (const chip of await page.locator('#view-failures button.chip').all()) await chip.click();
  await page.click('#tab-dag');
  for (const id of kIds) await page.click(`#dag-chart g.node[data-id="${id}"]`);
  await page.click('#tab-timeline');
  await page.selectOption('#timeline-run', '0');
  // A click opens the task beside the timeline, which draws it anew at its new width. The
  // session's two attempts of one task lie on each other: each bar gets its click itself.
  const bars = await page.locator('#timeline-chart rect.bar').count();
  for (let i = 0; i < bars; i++) await page.locator('#timeline-chart rect.bar').nth(i).dispatchEvent('click');
  // The address names views only: anything else in it opens the summary.
  await page.evaluate(`location.hash = ${JSON.stringify(`#${session.payloads[0]!}`)}`);
  await page.waitForSelector('#view-summary:not([hidden])');
  await page.evaluate("location.hash = '#__proto__'");
  await page.click('#tab-tasks');
  // Each click sorts, and draws the headings anew.
  const headings = await page.locator('.thead span').count();
  for (let i = 0; i < headings; i++) await page.locator('.thead span').nth(i).click();
  await page.fill('#filter-text', 'script');
  await page.selectOption('#filter-role', '__proto__');
}

/** Nothing of the session ran or loaded, and the page holds no element the session's texts name. */
async function expectNothingRan(watched: WatchedBrowser): Promise<void> {
  const { page } = watched;
  expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
  expect(await page.evaluate('Object.prototype.polluted')).toBeUndefined();
  expect(recorder.paths).toEqual([]);
  expect(watched.dialogs).toEqual([]);
  expect(watched.consoleErrors).toEqual([]);
  expect(await page.locator('script').count()).toBe(2); // the data and the page's own script
  expect(await page.locator('img, iframe, object, embed, form, base, link, meta[http-equiv="refresh"], svg [onload]').count()).toBe(0);
  expect(await page.locator('style').count()).toBe(1);
  for (const href of await page.locator('a').evaluateAll((links) => links.map((link) => link.getAttribute('href')))) {
    expect(href).toMatch(/^artifacts\/[A-Za-z0-9]+\/[a-z]+\.md$/);
  }
}

/** The texts are on the page as written (the payloads are text, not markup). */
async function expectTextsAsWritten(watched: WatchedBrowser): Promise<void> {
  const { page } = watched;
  const name = session.dir.slice(session.dir.lastIndexOf('/') + 1);
  expect(await page.title()).toBe(`csv-wave report: ${name}`);
  await page.click('#tab-tasks');
  await page.selectOption('#filter-role', '');
  await page.fill('#filter-text', '');
  await page.click('.trow[data-id="H1"]');
  expect(await page.textContent('#detail h2')).toBe(`H1 — ${session.payloads[0]}`);
  expect(await page.textContent('#detail pre[data-field="findings"]')).toBe(session.all);
  expect(await page.textContent('#detail pre[data-field="prev_context"]')).toBe(session.all);
  expect(await page.locator('#detail a').evaluateAll((links) => links.map((link) => link.getAttribute('href')))).toEqual(['artifacts/H1/page.md']);
  await page.click('.trow[data-id="constructor"]');
  expect(await page.textContent('#detail pre[data-field="error"]')).toBe(session.all);
  expect(await page.textContent('#detail pre[data-field="discoveries"]')).toContain(`"toString": ${JSON.stringify(session.payloads[3])}`);
  await page.click('.trow[data-id="valueOf"]');
  expect((await page.textContent('#detail pre[data-field="findings"]'))!.length).toBeGreaterThan(900_000);
  // The person's columns are headings as named, their cells as written.
  const headings = await page.locator('.thead [data-col]').allTextContents();
  expect(headings).toContain(kMarkupColumn);
  expect(headings).toContain('constructor');
  expect(await page.textContent(`.trow[data-id="H1"] [data-col=${JSON.stringify(kMarkupColumn)}]`)).toBe(session.payloads[0]);
  expect(await page.textContent('.trow[data-id="H1"] [data-col="constructor"]')).toBe(session.payloads[7]);
  // The filter lists the role `__proto__` like any other.
  expect(await page.locator('#filter-role option').allTextContents()).toContain('__proto__');
}

describe('report.html of a hostile session, from file://', () => {
  test('no script of the session runs, nothing loads, the texts show as written', { timeout: 300_000 }, async () => {
    const watched = await openBrowser([recorder.origin]);
    try {
      const url = pathToFileURL(join(session.dir, 'report.html')).href;
      await watched.page.goto(url);
      await readEverything(watched);
      await expectNothingRan(watched);
      await expectTextsAsWritten(watched);
      expect(watched.requests).toEqual([url]);
      // The artifact's link opens the file as text: its scripts do not run.
      await watched.page.goto(pathToFileURL(join(session.dir, 'artifacts', 'H1', 'page.md')).href);
      expect(await watched.page.evaluate('document.contentType')).not.toMatch(/html/);
      expect(await watched.page.evaluate('typeof window.__pwned')).toBe('undefined');
      expect(recorder.paths).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});

describe('report.html of a hostile session, through csv-wave serve', () => {
  let served: ServedSession | undefined;
  afterAll(() => stop(served?.server));

  test('no script runs, before and after a live change with more of it; /data and an artifact open as inert text', { timeout: 300_000 }, async () => {
    served = await serve(session.dir);
    const origin = served.url.replace(/\/$/, '');
    const watched = await openBrowser([origin, recorder.origin]);
    try {
      const { page } = watched;
      await page.goto(served.url);
      await readEverything(watched);
      await expectNothingRan(watched);
      await expectTextsAsWritten(watched);

      // A run goes on: an attempt line with more of it, which the page fetches as data.
      const line = readFileSync(join(session.dir, 'attempts.ndjson'), 'utf8').split('\n')[0]!;
      appendFileSync(join(session.dir, 'attempts.ndjson'), `${line.replace('"outcome":"completed"', '"outcome":"retried"').replace('"error":""', `"error":${JSON.stringify(session.all)}`)}\n`);
      await page.waitForSelector('body:not([data-updates="0"])');
      await page.click('#tab-timeline');
      expect(await page.locator('#timeline-chart rect.bar').count()).toBe(6);
      await readEverything(watched);
      await expectNothingRan(watched);
      expect(watched.requests.filter((url) => !url.startsWith(origin))).toEqual([]);

      for (const [path, type] of [
        ['artifacts/H1/page.md', 'text/plain'],
        ['data', 'application/json'],
      ] as const) {
        // A megabyte on one line takes Chromium a while to lay out on a loaded machine.
        const answer = await page.goto(`${served.url}${path}`, { timeout: 120_000 });
        expect(answer!.headers()['content-type']).toBe(`${type}; charset=utf-8`);
        expect(answer!.headers()['content-security-policy']).toBe("default-src 'none'; sandbox");
        expect(await page.evaluate('document.contentType')).toBe(type);
        expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
        expect(await page.locator('script, img, iframe').count()).toBe(0);
      }
      expect(recorder.paths).toEqual([]);
      expect(watched.dialogs).toEqual([]);
      expect(watched.blocked).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
