import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openBrowser, type WatchedBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

/**
 * report.html as a CI run page, in Chromium: the timeline of one run at a time, the task
 * table with the session's own columns and the run's measures, the cost and what failed
 * tasks spent, and the address's #view.
 */
let browser: WatchedBrowser;

beforeAll(async () => {
  browser = await openBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** The page loaded afresh (not a move of the address's #view within the page already open). */
async function open(dir: string, view = ''): Promise<Page> {
  const { page } = browser;
  await page.goto('about:blank');
  await page.goto(`${pathToFileURL(join(dir, 'report.html')).href}${view === '' ? '' : `#${view}`}`);
  await page.waitForSelector('body[data-ready="true"]');
  return page;
}

/** The boxes of the elements, as the page lays them out. */
function boxes(page: Page, selector: string): Promise<{ left: number; right: number; top: number; bottom: number; text: string }[]> {
  return page.locator(selector).evaluateAll((nodes) =>
    nodes.map((node) => {
      const box = node.getBoundingClientRect();
      return { left: box.left, right: box.right, top: box.top, bottom: box.bottom, text: node.textContent ?? '' };
    }),
  );
}

function expectNoOverlap(list: { left: number; right: number; top: number; bottom: number; text: string }[]): void {
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [a, b] = [list[i]!, list[j]!];
      const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
      expect(apart, `${a.text} and ${b.text} overlap`).toBe(true);
    }
  }
}

/** One line of attempts.ndjson, as a run writes it. */
function attempt(run: string, task: string, startMs: number, durationMs: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    run,
    task,
    attempt: 1,
    wave: 1,
    start: new Date(startMs).toISOString(),
    end: new Date(startMs + durationMs).toISOString(),
    duration_ms: durationMs,
    outcome: 'completed',
    error_class: '',
    error: '',
    thread: 1,
    host: 'h',
    pid: 1,
    prompt_tokens: 0,
    completion_tokens: 0,
    ...extra,
  });
}

describe('the timeline (real browser)', () => {
  /**
   * Two runs half an hour apart. Run 1: A (retried once) and B, five seconds. Run 2: sixty
   * waves, one task each, a second apart: more wave starts than labels fit, and more rows
   * than the view holds.
   */
  const kRun1 = Date.parse('2026-01-01T10:00:00.000Z');
  const kRun2 = Date.parse('2026-01-01T10:30:00.000Z');
  let dir: string;

  beforeAll(async () => {
    const rows = [
      { id: 'A', description: 'a', role: 'r', wave: '1', status: 'completed' },
      { id: 'B', description: 'b', role: 'r', wave: '1', status: 'completed' },
    ];
    const lines = [
      attempt('run-1', 'A', kRun1, 2000, { outcome: 'retried', error_class: 'transient', error: 'busy' }),
      attempt('run-1', 'A', kRun1 + 3000, 2000, { attempt: 2 }),
      attempt('run-1', 'B', kRun1, 4000),
    ];
    for (let wave = 1; wave <= 60; wave++) {
      rows.push({ id: `W${wave}`, description: 'w', role: 'r', wave: String(wave), status: 'completed', ...(wave > 1 ? { deps: `W${wave - 1}` } : {}) });
      lines.push(attempt('run-2', `W${wave}`, kRun2 + (wave - 1) * 1000, 900, { wave }));
    }
    dir = buildSession(rows, { files: { 'attempts.ndjson': `${lines.join('\n')}\n` } });
    const report = await runCli('report', dir);
    expect(report.code, report.stderr).toBe(0);
  });

  test('the latest run by default, alone, across the whole width; task names on the left; a time axis with ticks; rows drawn only in view', async () => {
    const page = await open(dir, 'timeline');
    const options = await page.locator('#timeline-run option').allTextContents();
    expect(options).toHaveLength(2);
    expect(options[0]).toBe('run 1 of 2 · 2026-01-01 10:00:00 UTC · 3 attempts');
    expect(options[1]).toBe('run 2 of 2 (latest) · 2026-01-01 10:30:00 UTC · 60 attempts');
    expect(await page.inputValue('#timeline-run')).toBe('1');
    await page.waitForSelector('#timeline-chart[data-run="1"]');

    // Only run 2's tasks, in the order they started, named in the left column.
    const names = await page.locator('#timeline-chart text.tl-name').allTextContents();
    expect(names.slice(0, 3)).toEqual(['W1', 'W2', 'W3']);
    expect(await page.locator('#timeline-chart [data-task="A"]').count()).toBe(0);
    // The run's first bar starts where the chart does, right of the names.
    const chart = (await boxes(page, '#timeline-chart'))[0]!;
    const first = (await boxes(page, '#timeline-chart rect.bar[data-task="W1"]'))[0]!;
    expect(first.left).toBeGreaterThanOrEqual(chart.left + 199);
    expect(first.left).toBeLessThan(chart.left + 210);
    for (const name of await boxes(page, '#timeline-chart text.tl-name')) expect(name.right).toBeLessThanOrEqual(chart.left + 200);

    // The axis: ticks from 0, evenly spaced, left to right.
    const ticks = await page.locator('#timeline-chart text.tick-label').evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute('data-ms'))));
    expect(ticks.length).toBeGreaterThanOrEqual(4);
    expect(ticks[0]).toBe(0);
    expect(await page.locator('#timeline-chart text.tick-label').first().textContent()).toBe('0');
    const step = ticks[1]! - ticks[0]!;
    expect(step).toBeGreaterThan(0);
    ticks.forEach((tick, i) => expect(tick).toBe(i * step));
    expect(await page.locator('#timeline-chart text.tick-label').nth(1).textContent()).toMatch(/^\d+(\.\d+)? (ms|s|min)$/);

    // 60 rows, fewer drawn; scrolled to the end, the last ones are.
    expect(await page.getAttribute('#timeline-chart', 'data-rows')).toBe('60');
    expect(await page.locator('#timeline-chart g.tl-row').count()).toBeLessThan(60);
    await page.locator('#timeline-viewport').evaluate((node) => {
      node.scrollTop = node.scrollHeight;
    });
    await page.waitForSelector('#timeline-chart text.tl-name[data-task="W60"]');
    expect(await page.locator('#timeline-chart text.tl-name[data-task="W1"]').count()).toBe(0);
    // A run is never squeezed beside another: its last bar ends at the chart's right (56 px of
    // room left for the label of a wave that starts at the end).
    const last = (await boxes(page, '#timeline-chart rect.bar[data-task="W60"]'))[0]!;
    expect(last.right).toBeGreaterThan(chart.right - 60);
    expect(last.right).toBeLessThanOrEqual(chart.right - 50);
    expect(browser.consoleErrors).toEqual([]);
  });

  test('wave labels never overlap: some give way at a glance, all show once zoomed in', async () => {
    const page = await open(dir, 'timeline');
    await page.waitForSelector('#timeline-chart[data-run="1"]');
    const marks = await page.locator('#timeline-chart line.wave-mark').count();
    expect(marks).toBe(60);
    const labels = await boxes(page, '#timeline-chart text.wave-label');
    expect(labels.length).toBeGreaterThan(10);
    expect(labels.length).toBeLessThan(60);
    expectNoOverlap(labels);

    await page.click('#timeline-zoom-in');
    await page.waitForSelector('#timeline-chart[data-zoom="2"]');
    await page.click('#timeline-zoom-in');
    await page.waitForSelector('#timeline-chart[data-zoom="4"]');
    const zoomed = await boxes(page, '#timeline-chart text.wave-label');
    expectNoOverlap(zoomed);
    // Every wave start in view has its label.
    expect(zoomed.length).toBe(await page.locator('#timeline-chart line.wave-mark').count());
    expect(zoomed.length).toBeGreaterThan(5);
  });

  test('an earlier run picked: its own rows and time; a retried attempt is its own segment, marked', async () => {
    const page = await open(dir, 'timeline');
    await page.selectOption('#timeline-run', '0');
    await page.waitForSelector('#timeline-chart[data-run="0"]');
    expect(await page.locator('#timeline-chart text.tl-name').allTextContents()).toEqual(['A', 'B']);
    const bars = await page.locator('#timeline-chart rect.bar[data-task="A"]').evaluateAll((nodes) =>
      nodes.map((node) => ({ outcome: node.getAttribute('data-outcome'), attempt: node.getAttribute('data-attempt'), x: Number(node.getAttribute('x')), width: Number(node.getAttribute('width')) })),
    );
    expect(bars.map((bar) => [bar.attempt, bar.outcome])).toEqual([
      ['1', 'retried'],
      ['2', 'completed'],
    ]);
    expect(bars[0]!.x + bars[0]!.width).toBeLessThan(bars[1]!.x);
    expect(await page.getAttribute('#timeline-chart rect.bar[data-outcome="retried"]', 'stroke-dasharray')).toBe('3 2');
    expect(await page.textContent('#timeline-chart text.tl-retries[data-task="A"]')).toBe('↻1');
    expect(await page.locator('#timeline-chart text.tl-retries[data-task="B"]').count()).toBe(0);
    // Five seconds fill the chart as an hour would: the axis is the run's own.
    const last = (await boxes(page, '#timeline-chart rect.bar[data-attempt="2"]'))[0]!;
    const chart = (await boxes(page, '#timeline-chart'))[0]!;
    expect(last.right).toBeGreaterThan(chart.right - 60);
    // A click on a segment opens its task.
    await page.click('#timeline-chart rect.bar[data-outcome="retried"]');
    await page.waitForSelector('#detail[data-task="A"]');
    expect(await page.locator('#detail li').allTextContents()).toEqual(['#1 retried (transient), 2.0 s, thread 1, run 1', '#2 completed, 2.0 s, thread 1, run 1']);
    expect(browser.consoleErrors).toEqual([]);
  });
});

describe('the task table, the DAG and the cost (real browser)', () => {
  /**
   * A batch of the person's own columns (owner, ticket, an empty notes), run for real: T2
   * transient once, T3 fails, T4 skipped. usage.ndjson, written before the run, gives T1
   * a cost of its own and T3 tokens priced by session.json's pricing.
   */
  let dir: string;
  let status: string;

  beforeAll(async () => {
    const csv = [
      'id,owner,description,role,notes,deps,ticket',
      'T1,ana,first,build,,,OPS-1',
      'T2,bo,second,build,,,OPS-2',
      'T3,ana,third,test,,T1,',
      'T4,cy,fourth,ship,,T3;T2,OPS-4',
    ].join('\n');
    const usage = [
      { ts: '2026-01-01T00:00:00.000Z', task: 'T1', attempt: 1, request: 1, kind: 'agent', model: 'm', prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 0, reported: true, cost_usd: 0.5 },
      { ts: '2026-01-01T00:00:00.000Z', task: 'T3', attempt: 1, request: 1, kind: 'agent', model: 'm', prompt_tokens: 8000, completion_tokens: 948, cached_tokens: 0, reported: true },
    ];
    dir = buildSession(`${csv}\n`, {
      session: { pipeline: 'generic', pricing: { m: { input: 1, output: 2 } } },
      files: { 'usage.ndjson': usage.map((line) => `${JSON.stringify(line)}\n`).join('') },
    });
    const cmd = 'case {id} in T2) if [ -e t2.once ]; then echo ok; else touch t2.once; exit 75; fi;; T3) echo "broke" >&2; exit 3;; *) echo ok;; esac';
    const run = await runCli('run', dir, '--cmd', cmd, '--retry-delay', '0.01');
    expect(run.code, run.stderr).toBe(1);
    status = (await runCli('status', dir)).stdout;
  });

  test('the columns of tasks.csv in file order, empty ones hidden, then duration, attempts, tokens and cost', async () => {
    const page = await open(dir, 'tasks');
    const header = readFileSync(join(dir, 'tasks.csv'), 'utf8').split('\n')[0]!.replace(/^\uFEFF/, '').split(',').map((name) => name.replace(/"/g, ''));
    const rows = [...readRows(dir).values()];
    const cell = (row: (typeof rows)[number], name: string) => (name in row ? String(row[name as keyof typeof row]) : (row.extra[name] ?? ''));
    const expected = header.filter((name) => name === 'id' || name === 'status' || rows.some((row) => cell(row, name) !== ''));
    const shown = await page.locator('.thead [data-col]').allTextContents();
    expect(shown).toEqual(expected);
    expect(shown.slice(0, 5)).toEqual(['id', 'owner', 'description', 'role', 'deps']);
    expect(shown).toContain('ticket');
    expect(shown).not.toContain('notes');
    expect(shown).not.toContain('title');
    expect(await page.locator('.thead [data-stat]').allTextContents()).toEqual(['duration', 'attempts', 'tokens', 'cost']);

    const cellOf = (id: string, attr: string) => page.textContent(`.trow[data-id="${id}"] [${attr}]`);
    expect(await cellOf('T1', 'data-col="owner"')).toBe('ana');
    expect(await cellOf('T4', 'data-col="ticket"')).toBe('OPS-4');
    expect(await cellOf('T2', 'data-stat="attempts"')).toBe('2');
    expect(await cellOf('T1', 'data-stat="attempts"')).toBe('1');
    expect(await cellOf('T2', 'data-stat="duration"')).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(await cellOf('T4', 'data-stat="duration"')).toBe('');
    expect(await cellOf('T1', 'data-stat="tokens"')).toBe('1,200');
    expect(await cellOf('T1', 'data-stat="cost"')).toBe('$0.50');
    expect(await cellOf('T3', 'data-stat="tokens"')).toBe('8,948');
    expect(await cellOf('T3', 'data-stat="cost"')).toBe('$0.0099');
    expect(await cellOf('T2', 'data-stat="cost"')).toBe('');

    // Sorted by attempts, most first.
    await page.click('.thead [data-stat="attempts"]');
    await page.click('.thead [data-stat="attempts"]');
    await page.waitForSelector('.thead [data-stat="attempts"][aria-sort="descending"]');
    expect(await page.locator('.trow').first().getAttribute('data-id')).toBe('T2');
    // The filter searches the person's columns too.
    await page.fill('#filter-text', 'ops-2');
    await page.waitForSelector('#row-count:text-is("1 of 4 tasks")');
    expect(await page.locator('.trow').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-id')))).toEqual(['T2']);
    expect(browser.consoleErrors).toEqual([]);
  });

  test('the DAG boxes show each task\'s role and duration', async () => {
    const page = await open(dir, 'dag');
    expect(await page.textContent('#dag-chart g.node[data-id="T1"] text.node-meta')).toMatch(/^build · \d+(\.\d)? (ms|s)$/);
    expect(await page.textContent('#dag-chart g.node[data-id="T3"] text.node-meta')).toMatch(/^test · \d+(\.\d)? (ms|s)$/);
    // T4 never ran: its role alone.
    expect(await page.textContent('#dag-chart g.node[data-id="T4"] text.node-meta')).toBe('ship');
  });

  test('the cost in the summary is status\'s; per task it is context.md\'s; tokens spent on failed tasks are called out', async () => {
    const page = await open(dir);
    const fact = (scope: string, name: string) => page.locator(`${scope} dt:text-is("${name}") + dd`).textContent();
    const cost = await fact('#view-summary', 'cost');
    expect(cost).toBe('$0.51 (2 request(s))');
    expect(status).toContain(`Cost: ${cost}\n`);
    expect(await page.textContent('#failed-spend')).toBe('8,948 tokens on tasks that failed ($0.0099)');
    expect(await fact('#view-summary', 'tokens')).toBe('9,000 prompt (0 cached), 1,148 completion, in 2 requests');

    const context = readFileSync(join(dir, 'context.md'), 'utf8');
    await page.click('#tab-tasks');
    for (const id of ['T1', 'T3']) {
      await page.click(`.trow[data-id="${id}"]`);
      await page.waitForSelector(`#detail[data-task="${id}"]`);
      const shown = await fact('#detail', 'cost');
      expect(context).toMatch(new RegExp(`^\\| ${id} \\|.*\\| ${shown!.replace(/[$.]/g, '\\$&')} \\|$`, 'm'));
    }
    expect(browser.consoleErrors).toEqual([]);
  });
});

describe('the address\'s #view (real browser)', () => {
  test('a tab click puts the view in the address; a new #view switches the view; back and forward go through them', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    expect((await runCli('run', dir, '--cmd', 'echo ok')).code).toBe(0);
    const page = await open(dir);
    const shows = (view: string) => page.waitForSelector(`#view-${view}:not([hidden])`);
    await shows('summary');
    // Set once: still there at the end, so no view switch below reloaded the page.
    await page.evaluate('window.__kept = 1');
    await page.click('#tab-tasks');
    await shows('tasks');
    await page.waitForFunction("location.hash === '#tasks'");
    await page.evaluate("location.hash = 'timeline'");
    await shows('timeline');
    expect(await page.getAttribute('#tab-timeline', 'aria-selected')).toBe('true');
    await page.goBack();
    await shows('tasks');
    await page.goBack();
    await shows('summary');
    await page.goForward();
    await shows('tasks');
    // A name that is no view (an object's own method) opens the summary.
    await page.evaluate("location.hash = 'constructor'");
    await shows('summary');
    expect(await page.locator('main section:not([hidden])').count()).toBe(1);
    expect(await page.evaluate('window.__kept')).toBe(1);
    expect(browser.consoleErrors).toEqual([]);
  });
});
