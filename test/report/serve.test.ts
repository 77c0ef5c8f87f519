import { existsSync, mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { artifactSession, kNotes } from '../helpers/artifact-session.js';
import { openBrowser, type WatchedBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, type RowInput, tasksCsv } from '../helpers/session-builder.js';
import { liveReader, serve, stop, type LiveReader } from '../helpers/serve-cli.js';
import { sleep, spawnCli, spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

let browser: WatchedBrowser | undefined;
afterAll(async () => {
  await browser?.close();
});

describe('csv-wave serve', () => {
  let server: SpawnedCli | undefined;
  let run: SpawnedCli | undefined;
  let dir = '';
  beforeAll(() => {
    // SLOW waits for a file the test creates; FAST finishes at once.
    dir = buildSession([
      { id: 'FAST', description: 'f', role: 'r' },
      { id: 'SLOW', description: 's', role: 'r' },
    ]);
  });
  afterAll(async () => {
    if (dir) writeFileSync(join(dir, 'release'), '');
    await stop(run);
    await stop(server);
  });

  test('a task finishing during a run appears on the open page without a reload', async () => {
    const cmd = 'case {id} in SLOW) while [ ! -e release ]; do sleep 0.05; done; echo slow done;; *) echo fast done;; esac';
    run = spawnCli('run', dir, '--cmd', cmd, '--concurrency', '2');
    await waitFor(() => /\[DONE\] FAST/.test(run!.stdoutSoFar()), 'FAST to finish');
    const started = await serve(dir);
    server = started.server;
    const origin = started.url.replace(/\/$/, '');
    browser = await openBrowser([origin]);
    const { page } = browser;
    // Loads, not navigations: a tab click moves the address's #view, which is no reload.
    let navigations = 0;
    page.on('load', () => navigations++);
    await page.goto(started.url);
    await page.waitForSelector('body[data-ready="true"]');
    await page.click('#tab-tasks');
    expect(await page.textContent('.trow[data-id="FAST"] .status')).toBe('completed');
    expect(await page.textContent('.trow[data-id="SLOW"] .status')).toBe('in_progress');
    await page.screenshot({ path: join(dir, 'live-before.png') });

    writeFileSync(join(dir, 'release'), '');
    await page.waitForSelector('.trow[data-id="SLOW"] .status-completed');
    expect(Number(await page.getAttribute('body', 'data-updates'))).toBeGreaterThan(0);
    expect(navigations).toBe(1);
    await page.screenshot({ path: join(dir, 'live-after.png') });
    expect((await run.exited).code).toBe(0);
    expect(browser.blocked).toEqual([]);
    expect(browser.consoleErrors).toEqual([]);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
  });
});

/** Rows A and B with the statuses given: a tasks.csv a person (or a run) rewrote. */
function twoRows(a: string, b: string): RowInput[] {
  return [
    { id: 'A', description: 'a', role: 'r', status: a, findings: a === 'completed' ? 'A is done' : '' },
    { id: 'B', description: 'b', role: 'r', status: b, findings: b === 'completed' ? 'B is done' : '' },
  ];
}

/** tasks.csv replaced by a rename, as the engine does: the server never reads half of it. */
function rewriteTasks(dir: string, rows: RowInput[]): void {
  writeFileSync(join(dir, 'tasks.csv.new'), tasksCsv(rows));
  renameSync(join(dir, 'tasks.csv.new'), join(dir, 'tasks.csv'));
}

describe('csv-wave serve: a change is a notice, and the page fetches the data', () => {
  test('each change reaches the page as its number only; the page fetches /data once per change and shows it without a reload', async () => {
    const dir = buildSession(twoRows('', ''));
    const { server, url } = await serve(dir);
    const watched = await openBrowser([url.replace(/\/$/, '')]);
    let reader: LiveReader | undefined;
    try {
      const { page } = watched;
      // Loads, not navigations: a tab click moves the address's #view, which is no reload.
      let navigations = 0;
      page.on('load', () => navigations++);
      await page.goto(url);
      await page.waitForSelector('body[data-ready="true"]');
      await page.click('#tab-tasks');
      expect(await page.textContent('.trow[data-id="A"] .status')).toBe('pending');
      reader = await liveReader(url);

      rewriteTasks(dir, twoRows('completed', ''));
      await page.waitForSelector('.trow[data-id="A"] .status-completed');
      rewriteTasks(dir, twoRows('completed', 'completed'));
      await page.waitForSelector('.trow[data-id="B"] .status-completed');
      await page.click('.trow[data-id="B"]');
      expect(await page.textContent('#detail pre[data-field="findings"]')).toBe('B is done');

      expect(await page.getAttribute('body', 'data-updates')).toBe('2');
      expect(watched.requests.filter((request) => request === `${url}data`)).toHaveLength(2);
      expect(navigations).toBe(1);
      // What the stream carried: the number of each change, a few bytes, never the data.
      await waitFor(() => reader!.messages.includes('3'), 'the notice of the second change');
      expect(reader.messages.every((message) => /^\d+$/.test(message)), reader.messages.join(' | ')).toBe(true);
      expect(reader.bytes()).toBeLessThan(100);
      const data = (await (await fetch(`${url}data`)).json()) as { generation: number; tasks: string[][] };
      expect(data.generation).toBe(3);
      expect(data.tasks.map((task) => task[4])).toEqual(['completed', 'completed']);
      expect(watched.blocked).toEqual([]);
      expect(watched.consoleErrors).toEqual([]);
    } finally {
      reader?.close();
      await watched.close();
      await stop(server);
    }
  });

  test('a change that a request for /data read first is still announced to the streams open before, also when a stream opens after it', async () => {
    const dir = buildSession(twoRows('', ''));
    const { server, url } = await serve(dir);
    const readers: LiveReader[] = [];
    try {
      expect((await fetch(`${url}data`)).status).toBe(200);
      readers.push(await liveReader(url));
      await waitFor(() => readers[0]!.messages.includes('1'), 'the first notice');
      rewriteTasks(dir, twoRows('completed', ''));
      // Read at once, most often before the server's next look at the files: then this request
      // builds change 2 (unless the server is still in its pause after the last read: then the look does).
      expect((await fetch(`${url}data`)).status).toBe(200);
      readers.push(await liveReader(url));
      for (const reader of readers) await waitFor(() => reader.messages.includes('2'), 'the notice of change 2');
    } finally {
      for (const reader of readers) reader.close();
      await stop(server);
    }
  });

  test('past 32 live pages the next stream is answered 503, its page says its live updates stopped, and a place that frees is taken again', async () => {
    const dir = buildSession(twoRows('', ''));
    const { server, url } = await serve(dir);
    const readers: LiveReader[] = [];
    const watched = await openBrowser([url.replace(/\/$/, '')]);
    try {
      for (let i = 0; i < 32; i++) readers.push(await liveReader(url));
      const refused = await fetch(`${url}events`);
      expect(refused.status).toBe(503);
      expect(await refused.text()).toMatch(/32 pages get live updates already/);

      const { page } = watched;
      await page.goto(url);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForFunction("/live updates stopped/.test(document.getElementById('generated').textContent)");
      // The page itself still shows the session.
      expect(await page.textContent('[data-count="total"]')).toBe('2');

      readers.shift()!.close();
      // The server sees the close a moment later: until then the place is still taken (503).
      let again: LiveReader | undefined;
      for (let tries = 1; !again; tries++) {
        try {
          again = await liveReader(url);
        } catch (error) {
          if (tries >= 1000) throw error;
          await sleep(20);
        }
      }
      readers.push(again);
      expect(watched.consoleErrors.filter((text) => !/503/.test(text))).toEqual([]);
    } finally {
      for (const reader of readers) reader.close();
      await watched.close();
      await stop(server);
    }
  });
});

describe('csv-wave serve of artifacts', () => {
  test('serves artifacts/<id>/<name>.md as the engine wrote it; 404 for a symlink, a bad name or a path outside', async () => {
    const dir = await artifactSession();
    const { server, url } = await serve(dir);
    try {
      const output = await fetch(`${url}artifacts/A/output.md`);
      expect(output.status).toBe(200);
      expect(output.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await output.text()).toBe(readFileSync(join(dir, 'artifacts', 'A', 'output.md'), 'utf8'));
      expect(await (await fetch(`${url}artifacts/A-b/notes.md`)).text()).toBe(kNotes);
      for (const path of [
        'artifacts/A/escape.md', // a symlink out of the session
        'artifacts/A-b/inside.md', // a symlink inside it: still never served
        'artifacts/A/missing.md',
        'artifacts/A/output', // not a <name>.md file
        'artifacts/A', // the folder
        'artifacts/A%2F..%2F..%2Ftasks.csv/x.md',
        'artifacts/..%2Ftasks.csv/x.md',
        'artifacts/%2E%2E/tasks.csv',
        'artifacts/A/..%2F..%2Ftasks.csv',
        'artifacts/A/b/output.md',
        'artifacts/A-output.md', // the old flat layout
      ]) {
        expect((await fetch(`${url}${path}`)).status, path).toBe(404);
      }
    } finally {
      await stop(server);
    }
  });
});

describe('csv-wave serve of a hard-linked artifact', () => {
  test('a hard link a command task made to a file outside the session is neither listed nor served; the engine\'s artifacts are', async () => {
    const outside = join(mkdtempSync(join(tmpdir(), 'csv-wave-outside-')), 'secret.md');
    writeFileSync(outside, 'secret outside the session\n');
    const dir = buildSession([
      { id: 'A', description: 'links', role: 'r' },
      { id: 'B', description: 'long', role: 'r' },
    ]);
    const cmd = `case {id} in A) mkdir -p artifacts/A && ln ${outside} artifacts/A/leak.md && echo linked;; *) yes 'a long finding' | head -c 2000;; esac`;
    const run = await runCli('run', dir, '--cmd', cmd);
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(join(dir, 'artifacts', 'A', 'leak.md')).nlink).toBe(2);

    const report = JSON.parse((await runCli('report', dir, '--json')).stdout) as { details: Record<string, { artifacts?: string[] }> };
    expect(report.details['A']?.artifacts).toBeUndefined();
    expect(report.details['B']?.artifacts).toEqual(['artifacts/B/output.md']);
    const { server, url } = await serve(dir);
    try {
      const leak = await fetch(`${url}artifacts/A/leak.md`);
      expect(leak.status).toBe(404);
      expect(await leak.text()).not.toContain('secret');
      expect((await fetch(`${url}artifacts/B/output.md`)).status).toBe(200);
    } finally {
      await stop(server);
    }
  });
});

describe('csv-wave serve on a non-loopback host', () => {
  test('refuses to start without a token', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const result = await spawnCliWith({ env: { CSV_WAVE_TOKEN: '' } }, 'serve', dir, '--host', '0.0.0.0', '--port', '0').exited;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--token/);
  });

  test('--client-timeout takes seconds above 0, at most a day; anything else is exit 2 naming the flag', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    // In process: each value is refused before a server starts (six spawned CLIs passed 120 s at a load of 30).
    for (const value of ['0', '-1', 'abc', '1e3', '86401', '']) {
      const result = await runCli('serve', dir, '--port', '0', '--client-timeout', value);
      expect(result.code, value).toBe(2);
      expect(result.stderr, value).toContain(`Expected \`--client-timeout\` to be a number of seconds above 0, at most 86400, got \`${value}\``);
    }
  });

  test('refuses requests without the right token; the token once as ?token= becomes a cookie', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const { server, url } = await serve(dir, '--host', '0.0.0.0', '--token', 'right-token');
    try {
      const local = url.replace('0.0.0.0', '127.0.0.1');
      expect((await fetch(local)).status).toBe(401);
      expect((await fetch(local, { headers: { Authorization: 'Bearer wrong-token' } })).status).toBe(401);
      expect((await fetch(`${local}?token=wrong-token`, { redirect: 'manual' })).status).toBe(401);
      expect((await fetch(`${local}events`, { headers: { Cookie: 'csv_wave_token=wrong-token' } })).status).toBe(401);

      const page = await fetch(local, { headers: { Authorization: 'Bearer right-token' } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('id="report-data"');
      const once = await fetch(`${local}?token=right-token`, { redirect: 'manual' });
      expect(once.status).toBe(303);
      expect(once.headers.get('location')).toBe('/');
      const cookie = once.headers.get('set-cookie')!.split(';')[0]!;
      expect(cookie).toBe('csv_wave_token=right-token');
      expect((await fetch(local, { headers: { Cookie: cookie } })).status).toBe(200);
    } finally {
      await stop(server);
    }
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).not.toContain('in_progress');
  });
});
