import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openBrowser, type WatchedBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { artifactSession } from '../helpers/artifact-session.js';
import { buildSession } from '../helpers/session-builder.js';
import { kScriptedAgentPath } from '../helpers/scripted-agent.js';
import { writeReportSession } from '../../scripts/bench/report-session.js';

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
    expect(await page.locator('#timeline-chart rect.bar').count()).toBe(attempts.length);
    expect(await page.locator('#timeline-chart rect.bar[data-outcome="retried"]').count()).toBe(1);
    const widthOf = async () => Number(await page.getAttribute('#timeline-chart rect.bar[data-outcome="retried"]', 'width'));
    const before = await widthOf();
    await page.click('#timeline-zoom-in');
    await page.waitForSelector('#timeline-chart[data-zoom="2"]');
    expect(await widthOf()).toBeCloseTo(before * 2, 0);
    await page.screenshot({ path: join(shots, 'timeline.png'), fullPage: true });

    await page.click('#tab-dag');
    expect(await page.locator('#dag-chart g.node').count()).toBe(status.tasks.length);
    expect(await page.getAttribute('#dag-chart g.node[data-id="EVAL-001"]', 'data-status')).toBe('failed');
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

/** Each sets window.__pwned or opens a dialog if it ever runs. */
const kScript = '</script><script>window.__pwned=1;alert(1)</script>';
const kImg = '<img src=x onerror="window.__pwned=2;alert(2)">';
const kSvg = '<svg onload="window.__pwned=3;alert(3)"></svg><iframe src="javascript:alert(4)"></iframe>';
const kRtlEmoji = 'مرحبا بالعالم \u202e🔥👩‍👩‍👧 שלום ';

describe('report.html of a hostile session (real browser)', () => {
  test('no dialog, no injected element, no request beyond the page itself', async () => {
    const result = JSON.stringify({
      findings: `${kImg} see javascript:alert(5)`,
      discoveries: [{ type: 'idea', data: { title: kScript, link: 'javascript:alert(6)', note: kSvg } }],
    });
    const hostile = buildSession([
      { id: 'H1', title: kScript, description: `${kScript}${kImg}${kSvg}`, role: '<b>r</b>' },
      { id: 'H2', title: kImg, description: result, role: 'r' },
      { id: 'H3', title: kRtlEmoji, description: kRtlEmoji.repeat(1000), role: 'r' },
      { id: 'H4', title: 'fails', description: `${kImg}${kScript}`, role: 'r' },
      { id: 'H5', title: kSvg, description: 'x', role: 'r', deps: 'H4' },
      { id: 'H6', title: '100 KB of output', description: 'x', role: 'r', context_from: '' },
    ]);
    const cmd =
      "case {id} in H4) printf %s {description} >&2; exit 1;; " +
      "H6) yes '<img src=x onerror=alert(9)></script>' | head -c 102400;; *) printf %s {description};; esac";
    const run = await runCli('run', hostile, '--cmd', cmd);
    expect(run.code, run.stderr).toBe(1);
    // A file whose name holds a scheme is no artifact name: it is neither linked nor listed.
    mkdirSync(join(hostile, 'artifacts', 'H1'), { recursive: true });
    writeFileSync(join(hostile, 'artifacts', 'H1', 'javascript:alert(7).md'), 'x');
    expect((await runCli('report', hostile)).code).toBe(0);

    const { page } = browser;
    const url = pathToFileURL(join(hostile, 'report.html')).href;
    const before = browser.requests.length;
    await page.goto(url);
    await page.waitForSelector('body[data-ready="true"]');
    for (const view of ['dag', 'timeline', 'failures', 'tasks']) await page.click(`#tab-${view}`);
    for (const id of ['H1', 'H2', 'H3', 'H4', 'H5', 'H6']) {
      await page.click(`.trow[data-id="${id}"]`);
      await page.waitForSelector(`#detail[data-task="${id}"]`);
    }
    await page.screenshot({ path: join(shots, 'hostile.png'), fullPage: true });

    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('img, iframe, script:not(#report-data)').count()).toBe(1); // the page's own script
    expect(await page.locator('svg [onload], svg foreignObject, a[href^="javascript"], a[href*=":"]').count()).toBe(0);
    // The text is shown as it was written.
    await page.click('.trow[data-id="H4"]');
    expect(await page.textContent('#detail pre[data-field="error"]')).toContain(kImg);
    await page.click('.trow[data-id="H1"]');
    expect(await page.textContent('#detail h2')).toContain(kScript);
    expect(await page.locator('#detail a').count()).toBe(0);
    expect(await page.textContent('#detail')).not.toContain('javascript:alert(7)');
    await page.click('.trow[data-id="H3"]');
    expect(await page.textContent('#detail pre[data-field="description"]')).toBe(kRtlEmoji.repeat(1000));

    expect(browser.requests.slice(before)).toEqual([url]);
    expect(browser.blocked).toEqual([]);
    expect(browser.dialogs).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
  });
});

describe('report.html of a session with artifacts (real browser)', () => {
  test('each task links its own artifacts/<id>/<name>.md files, A never those of A-b, and no symlink', async () => {
    const session = await artifactSession();
    expect((await runCli('report', session)).code).toBe(0);
    const { page } = browser;
    await page.goto(pathToFileURL(join(session, 'report.html')).href);
    await page.waitForSelector('body[data-ready="true"]');
    await page.click('#tab-tasks');
    const links = async (id: string) => {
      await page.click(`.trow[data-id="${id}"]`);
      await page.waitForSelector(`#detail[data-task="${id}"]`);
      return page.locator('#detail a').evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')));
    };
    expect(await links('A')).toEqual(['artifacts/A/output.md']);
    expect(await links('A-b')).toEqual(['artifacts/A-b/notes.md']);
    expect(await page.textContent('#detail')).not.toContain('escape');
    // The link leads to the file the engine wrote.
    await page.click('#detail a');
    await page.waitForURL(/artifacts\/A-b\/notes\.md$/);
    expect(await page.textContent('body')).toBe(readFileSync(join(session, 'artifacts', 'A-b', 'notes.md'), 'utf8'));
    expect(browser.consoleErrors).toEqual([]);
    expect(browser.blocked).toEqual([]);
  });
});

describe('report.html of a session with model and agent usage (real browser)', () => {
  test('the summary and each task show the tokens and cost usage.ndjson recorded; requests without a price are said, not counted as free', async () => {
    const session = buildSession([
      { id: 'A', description: 'd', role: 'r', status: 'completed' },
      { id: 'B', description: 'd', role: 'r', status: 'completed' },
      { id: 'C', description: 'd', role: 'r', status: 'completed' },
    ]);
    const line = (task: string, extra: Record<string, unknown>) =>
      JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', task, attempt: 1, request: 1, kind: 'agent', model: 'm', prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 100, reported: true, ...extra });
    writeFileSync(
      join(session, 'usage.ndjson'),
      [line('A', { cost_usd: 0.5, agent_session: 's-a' }), line('A', { request: 2, cost_usd: 1.25 }), line('B', { cost_usd: 0.004 }), line('C', {})].join('\n') + '\n',
    );
    expect((await runCli('report', session)).code).toBe(0);
    const { page } = browser;
    await page.goto(pathToFileURL(join(session, 'report.html')).href);
    await page.waitForSelector('body[data-ready="true"]');
    const fact = (scope: string, name: string) => page.locator(`${scope} dt:text-is("${name}") + dd`).textContent();
    expect(await fact('#view-summary', 'tokens')).toBe('4,000 prompt (400 cached), 800 completion, in 4 requests');
    expect(await fact('#view-summary', 'cost')).toBe('$1.75 (4 request(s); 1 of them without a price, not counted)');
    expect(await fact('#view-summary', 'prompt cache')).toBe('400 of 4,000 prompt tokens cached (10.0%)');
    await page.click('#tab-tasks');
    const open = async (id: string) => {
      await page.click(`.trow[data-id="${id}"]`);
      await page.waitForSelector(`#detail[data-task="${id}"]`);
    };
    await open('A');
    expect(await fact('#detail', 'tokens')).toBe('2,000 prompt (200 cached), 400 completion, in 2 requests');
    expect(await fact('#detail', 'cost')).toBe('$1.75');
    await open('B');
    expect(await fact('#detail', 'cost')).toBe('$0.0040');
    await open('C');
    expect(await fact('#detail', 'cost')).toBe('unknown');
    expect(browser.consoleErrors).toEqual([]);
  });
});

describe('report.html of a session past 2,000 tasks (real browser)', () => {
  test('the DAG shows one box per wave, and a click draws that wave\'s tasks', async () => {
    const rows = [];
    for (let i = 0; i < 2100; i++) rows.push({ id: `T${i}`, description: 'd', role: 'r', deps: i >= 700 ? `T${i - 700}` : '' });
    const big = buildSession(rows);
    expect((await runCli('plan', big)).code).toBe(0);
    expect((await runCli('report', big)).code).toBe(0);
    const { page } = browser;
    await page.goto(`${pathToFileURL(join(big, 'report.html')).href}#dag`);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#dag-chart g.aggregate').count()).toBe(3);
    expect(await page.locator('g.node').count()).toBe(0);
    await page.click('#dag-chart g.aggregate[data-wave="2"]');
    expect(await page.locator('g.node').count()).toBe(700);
    expect(await page.locator('g.node[data-id="T700"]').count()).toBe(1);
    await page.screenshot({ path: join(shots, 'dag-aggregates.png') });
    expect(browser.consoleErrors).toEqual([]);
    expect(browser.blocked).toEqual([]);
  });
});

describe('report.html of 50,000 tasks (real browser)', () => {
  test('it paints, and the task table scrolls to the middle and the end, drawing only the rows in view', async () => {
    const tasks = 50_000;
    const big = mkdtempSync(join(tmpdir(), 'csv-wave-report-big-'));
    writeReportSession(big, tasks);
    writeFileSync(join(big, 'session.json'), '{"pipeline":"generic"}\n');
    const report = await runCli('report', big);
    expect(report.code, report.stderr).toBe(0);
    const { page } = browser;
    await page.goto(`${pathToFileURL(join(big, 'report.html')).href}#tasks`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 120_000 });
    expect(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint').length)).toBe(1);
    expect(await page.getByText(`${tasks} of ${tasks} tasks`).count()).toBe(1);
    // The table is in the file's order: row r is task T<r>, in five digits.
    const id = (r: number) => `T${String(r).padStart(5, '0')}`;
    for (const [where, row] of [['middle', tasks / 2], ['end', tasks - 1]] as const) {
      await page.locator('#table-viewport').evaluate((node, to) => {
        node.scrollTop = to === 'end' ? node.scrollHeight : node.scrollHeight / 2;
      }, where);
      await page.waitForSelector(`.trow[data-id="${id(row)}"]`);
      expect(await page.locator('.trow').count()).toBeLessThan(200);
    }
    expect(browser.consoleErrors).toEqual([]);
  });
});
