import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openBrowser, type WatchedBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { kScriptedAgentPath } from '../helpers/scripted-agent.js';

/**
 * The scripted brainstorm (one GC round), with IDEA-001 failing transiently once (a retry)
 * and EVAL-001 failing for good, so that every view has something to show.
 */
const kAgent = `node ${JSON.stringify(kScriptedAgentPath)}`;
const kCmd =
  `case {id} in EVAL-001) echo 'evaluator crashed' >&2; exit 3;; ` +
  `IDEA-001) if [ -e idea.once ]; then ${kAgent}; else touch idea.once; echo 'busy' >&2; exit 75; fi;; ` +
  `*) ${kAgent};; esac`;

let browser: WatchedBrowser;
let dir: string;
let shots: string;

beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), 'csv-wave-report-'));
  dir = join(root, 'session');
  shots = join(root, 'screenshots');
  const init = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Cutting office energy use', '--cmd', kCmd);
  expect(init.code, init.stderr).toBe(0);
  const run = await runCli('run', dir, '--retry-delay', '0.01');
  expect(run.code, run.stderr).toBe(1);
  browser = await openBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('report.html of a finished brainstorm session (real browser)', () => {
  test('counts equal status --json; one timeline bar per attempt; a failed task shows its error; the status filter; no console error', async () => {
    const status = JSON.parse((await runCli('status', dir, '--json')).stdout) as { counts: Record<string, number>; tasks: unknown[] };
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8').trimEnd().split('\n');
    const { page } = browser;
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
    await page.waitForSelector('body[data-ready="true"]');
    await page.screenshot({ path: join(shots, 'summary.png'), fullPage: true });

    for (const [name, count] of Object.entries(status.counts)) {
      expect(await page.textContent(`[data-count="${name}"]`), name).toBe(String(count));
    }
    expect(await page.textContent('[data-count="total"]')).toBe(String(status.tasks.length));

    await page.click('#tab-timeline');
    expect(await page.locator('#timeline rect.bar').count()).toBe(attempts.length);
    expect(await page.locator('#timeline rect.bar[data-outcome="retried"]').count()).toBe(1);
    await page.screenshot({ path: join(shots, 'timeline.png'), fullPage: true });

    await page.click('#tab-dag');
    expect(await page.locator('#dag g.node').count()).toBe(status.tasks.length);
    expect(await page.getAttribute('#dag g.node[data-id="EVAL-001"]', 'data-status')).toBe('failed');
    await page.screenshot({ path: join(shots, 'dag.png'), fullPage: true });

    await page.click('#tab-failures');
    await page.screenshot({ path: join(shots, 'failures.png'), fullPage: true });
    expect(await page.locator('.failure-group[data-kind="failed"]').count()).toBe(1);

    await page.click('#tab-tasks');
    await page.click('.trow[data-id="EVAL-001"]');
    expect(await page.textContent('#detail pre[data-field="error"]')).toMatch(/evaluator crashed/);
    await page.screenshot({ path: join(shots, 'tasks.png'), fullPage: true });

    for (const wanted of ['completed', 'failed', 'skipped']) {
      await page.selectOption('#filter-status', wanted);
      const shown = await page.locator('.trow').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id')));
      const expected = (status.tasks as Record<string, string>[]).filter((task) => task['status'] === wanted).map((task) => task['id']);
      expect(shown.sort(), wanted).toEqual(expected.sort());
    }

    expect(browser.consoleErrors).toEqual([]);
    expect(browser.dialogs).toEqual([]);
    expect(browser.blocked).toEqual([]);
  });
});
