import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { sha256 } from '../../src/cache/canonical-json.js';
import { cacheStats, clearCache, pruneCache } from '../../src/cache/cache-housekeeping.js';
import { CacheStore, kUsesHeader } from '../../src/cache/cache-store.js';
import { kCacheFormat } from '../../src/cache/task-key.js';
import { parseAge, parseSize } from '../../src/cli/commands/cache.js';
import type { FinishedAttempt } from '../../src/executors/messages.js';
import { CacheFolder } from '../../src/session/files/cache-folder.js';
import { SecretScrubber } from '../../src/text/secret-scrubber.js';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { buildSession } from '../helpers/session-builder.js';

// Issue 25 item 7: `csv-wave cache --stats | --prune | --clear`, and session.json's
// cache_dir shared by two sessions. Pruning is safe against a run reading or writing at the
// same time: an entry reads whole and right, or is a miss.

const kDay = 86_400_000;

/** A completed attempt of T with these findings. */
function reply(findings: string): FinishedAttempt {
  return finishedAttempt({ findings, discovery: { taskId: 'T', role: 'r', status: 'completed', findings, error: null, artifacts: [] } });
}

const keyOf = (n: number) => sha256(`key ${n}`);
const inputs = (n: number) => JSON.stringify([['format', kCacheFormat], ['cell:id', `T${n}`]]);

interface Cache {
  dir: string;
  folder: CacheFolder;
  packs: string;
  warnings: string[];
  store: () => CacheStore;
}

function cache(): Cache {
  const dir = buildSession(null);
  const warnings: string[] = [];
  const folder = CacheFolder.of(dir, undefined);
  return { dir, folder, packs: folder.packs, warnings, store: () => new CacheStore(CacheFolder.of(dir, undefined), (message) => warnings.push(message), new SecretScrubber([])) };
}

/** Writes entries `from`..`to - 1` as one run does: a pack and its index. */
function write(c: Cache, from: number, to: number): void {
  const store = c.store();
  for (let n = from; n < to; n++) store.write(keyOf(n), `T${n}`, inputs(n), reply(`findings ${n}`), [], null);
  store.close();
}

/** Records hits of entry `n` at `ms`, as a run that took it writes them. */
function used(c: Cache, n: number, ms: number, name = `20990101T000000000Z-1-${n}.uses`): void {
  writeFileSync(join(c.packs, name), `${kUsesHeader}\n${keyOf(n)} 1 ${ms}\n`);
}

/** Each entry 0..count-1: its findings when it reads as valid, else undefined. */
function readAll(store: CacheStore, count: number): (string | undefined)[] {
  return Array.from({ length: count }, (_, n) => {
    const entry = store.read(keyOf(n));
    if (entry !== undefined) expect(entry.reply.findings).toBe(`findings ${n}`);
    return entry?.reply.findings;
  });
}

describe('cache --stats', () => {
  test('entries, bytes, the oldest and newest entry, the hits runs recorded', () => {
    const c = cache();
    expect(cacheStats(c.folder)).toMatchObject({ entries: 0, bytes: 0, packs: 0, hits: 0, broken: 0 });
    write(c, 0, 5);
    write(c, 3, 8);
    const reader = c.store();
    reader.noteHit(keyOf(1));
    reader.noteHit(keyOf(1));
    reader.noteHit(keyOf(6));
    reader.close();
    const stats = cacheStats(c.folder);
    // Keys 3 and 4 are in both packs: counted once.
    expect(stats).toMatchObject({ entries: 8, packs: 2, hits: 3, broken: 0 });
    expect(stats.bytes).toBe(readdirSync(c.packs).reduce((sum, name) => sum + readFileSync(join(c.packs, name)).length, 0));
    expect(Date.parse(stats.oldest!)).toBeLessThanOrEqual(Date.parse(stats.newest!));
    expect(stats.last_hit).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test('a changed line is counted as broken, not as an entry', () => {
    const c = cache();
    write(c, 0, 3);
    const pack = join(c.packs, readdirSync(c.packs).find((name) => name.endsWith('.pack'))!);
    writeFileSync(pack, readFileSync(pack, 'utf8').replace('findings 1', 'findings X'));
    expect(cacheStats(c.folder)).toMatchObject({ entries: 2, broken: 1 });
  });
});

describe('cache --prune', () => {
  test('--older-than removes the entries neither written nor taken within the age; a hit keeps an entry', () => {
    const c = cache();
    write(c, 0, 4);
    const now = Date.now() + 40 * kDay;
    used(c, 2, now - 10 * kDay);
    const result = pruneCache(c.folder, { olderThanMs: 30 * kDay }, now);
    expect(result).toMatchObject({ removed: 3, kept: 1 });
    expect(result.bytes_after).toBeLessThan(result.bytes_before);
    expect(readAll(c.store(), 4)).toEqual([undefined, undefined, 'findings 2', undefined]);
    // The kept entry's hit is kept with it.
    expect(cacheStats(c.folder)).toMatchObject({ entries: 1, hits: 1 });
    // Within the age, nothing goes.
    expect(pruneCache(c.folder, { olderThanMs: 30 * kDay }, Date.now())).toMatchObject({ removed: 0, kept: 1 });
  });

  test('--max-size removes the least recently used first', () => {
    const c = cache();
    write(c, 0, 6);
    const now = Date.now();
    used(c, 1, now + 2000, '20990101T000000000Z-1-a.uses');
    used(c, 4, now + 1000, '20990101T000000000Z-1-b.uses');
    const line = readFileSync(join(c.packs, readdirSync(c.packs).find((name) => name.endsWith('.pack'))!), 'utf8').split('\n')[0]!;
    // Room for two entries (each counts its line and its index line), not three.
    const result = pruneCache(c.folder, { maxBytes: 2 * (line.length + 1 + 90) }, now);
    expect(result).toMatchObject({ removed: 4, kept: 2 });
    expect(readAll(c.store(), 6)).toEqual([undefined, 'findings 1', undefined, undefined, 'findings 4', undefined]);
    expect(cacheStats(c.folder).bytes).toBe(result.bytes_after);
  });

  test('removes broken lines, older copies of a key and indexes without a pack; leaves a pack that keeps all its entries as it is', () => {
    const c = cache();
    write(c, 0, 3);
    const [first] = readdirSync(c.packs).filter((name) => name.endsWith('.pack'));
    appendFileSync(join(c.packs, first!), `${keyOf(9)} ${'0'.repeat(64)} {"not":"it"}\n`);
    write(c, 2, 5);
    writeFileSync(join(c.packs, '20000101T000000000Z-1-gone.index'), 'csv-wave-cache-index 1 0\n');
    const second = readdirSync(c.packs).filter((name) => name.endsWith('.pack')).find((name) => name !== first)!;
    const before = readFileSync(join(c.packs, second));
    expect(pruneCache(c.folder, { olderThanMs: 30 * kDay }, Date.now())).toMatchObject({ removed: 0, kept: 5 });
    const after = readdirSync(c.packs);
    expect(after).toContain(second);
    expect(readFileSync(join(c.packs, second))).toEqual(before);
    expect(after).not.toContain(first);
    expect(after).not.toContain('20000101T000000000Z-1-gone.index');
    // The rewritten pack sorts where the old one did, and has an index.
    expect(after.filter((name) => name.endsWith('.pack')).sort()[0]!.slice(0, 19)).toBe(first!.slice(0, 19));
    expect(after.filter((name) => name.endsWith('.index'))).toHaveLength(2);
    expect(cacheStats(c.folder)).toMatchObject({ entries: 5, broken: 0, packs: 2 });
    const store = c.store();
    expect(readAll(store, 5)).toEqual(['findings 0', 'findings 1', 'findings 2', 'findings 3', 'findings 4']);
    expect(c.warnings).toEqual([]);
  });

  test('a run that read the index before a prune gets a miss for a moved or removed entry, never another result', () => {
    const c = cache();
    write(c, 0, 10);
    const early = c.store();
    expect(early.has(keyOf(0))).toBe(true);
    used(c, 7, Date.now() + 1000);
    pruneCache(c.folder, { maxBytes: 1000 }, Date.now());
    // Its index points into a pack that is gone: every read is a miss, said.
    expect(readAll(early, 10)).toEqual(Array.from({ length: 10 }, () => undefined));
    expect(c.warnings.length).toBeGreaterThan(0);
    expect(readAll(c.store(), 10).filter((findings) => findings !== undefined)).toEqual(['findings 7']);
  });

  test('a run appending while a prune rewrites its pack loses what it appends after, and nothing reads wrong', () => {
    const c = cache();
    const writer = c.store();
    for (let n = 0; n < 5; n++) writer.write(keyOf(n), `T${n}`, inputs(n), reply(`findings ${n}`), [], null);
    writer.flush();
    used(c, 3, Date.now() + 1000);
    pruneCache(c.folder, { maxBytes: 1000 }, Date.now());
    for (let n = 5; n < 10; n++) writer.write(keyOf(n), `T${n}`, inputs(n), reply(`findings ${n}`), [], null);
    writer.close();
    expect(readAll(c.store(), 10)).toEqual([undefined, undefined, undefined, 'findings 3', undefined, undefined, undefined, undefined, undefined, undefined]);
    // The index the run wrote for its removed pack is no entry, and the next prune removes it.
    expect(cacheStats(c.folder)).toMatchObject({ entries: 1, broken: 0 });
    pruneCache(c.folder, { olderThanMs: kDay }, Date.now());
    expect(readdirSync(c.packs).filter((name) => name.endsWith('.index'))).toHaveLength(1);
  });
});

describe('cache --clear', () => {
  test('removes every entry and file of the folder', () => {
    const c = cache();
    write(c, 0, 3);
    used(c, 1, Date.now());
    writeFileSync(join(c.packs, 'x.pack.123.tmp'), 'left by a kill');
    expect(clearCache(c.folder)).toBe(3);
    expect(readdirSync(c.packs)).toEqual([]);
    expect(c.store().isEmpty()).toBe(true);
  });
});

describe('ages and sizes', () => {
  test('an age is a number and s, m, h, d or w; a size a number and K, M, G or T, of 1024', () => {
    expect(parseAge('30d')).toBe(30 * kDay);
    expect(parseAge('12h')).toBe(12 * 3_600_000);
    expect(parseAge('1.5w')).toBe(10.5 * kDay);
    expect(parseSize('1G')).toBe(1024 ** 3);
    expect(parseSize('500MB')).toBe(500 * 1024 ** 2);
    expect(parseSize('2 GiB')).toBe(2 * 1024 ** 3);
    expect(parseSize('4096')).toBe(4096);
    for (const bad of ['30', 'd', '-1d', '30 days', '']) expect(() => parseAge(bad), bad).toThrow(/--older-than.*e\.g\. `--older-than 30d`/);
    for (const bad of ['1X', 'G', '-1G', 'big']) expect(() => parseSize(bad), bad).toThrow(/--max-size.*e\.g\. `--max-size 1G`/);
  });
});

describe('csv-wave cache', () => {
  const kCmd = `${kLogRun}; echo "done $CSV_WAVE_TASK_ID"`;
  const rows = [
    { id: 'A', description: 'first' },
    { id: 'B', description: 'second', deps: 'A' },
  ];

  test('--stats after a run, --json; --clear makes the next run execute every task', async () => {
    const dir = buildSession(rows, { session: { pipeline: 'generic', executor: { type: 'command', cmd: kCmd } } });
    expect((await runCli('run', dir)).code).toBe(0);
    const stats = await runCli('cache', dir, '--stats');
    expect(stats.code, stats.stderr).toBe(0);
    expect(stats.stdout).toMatch(/^Cache: .*\.csv-wave\/cache\n2 entries, [\d.]+ (B|KB) in 1 pack\(s\)\nOldest entry \S+, newest \S+\nNo hit recorded\n$/);
    expect((await runCli('rerun', dir, '--task', 'A')).code).toBe(0);
    const json = JSON.parse((await runCli('cache', dir, '--json')).stdout) as Record<string, unknown>;
    // A ran again with the same inputs (its key written twice, counted once); B came from the cache: a hit recorded.
    expect(json).toMatchObject({ entries: 2, packs: 2, hits: 1, broken: 0 });

    const cleared = await runCli('cache', dir, '--clear', '--json');
    expect(JSON.parse(cleared.stdout)).toEqual({ removed: 2 });
    expect((await runCli('rerun', dir, '--task', 'A')).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ A: 3, B: 2 });
  });

  test('--prune prints what it removed and kept', async () => {
    const dir = buildSession(rows, { session: { pipeline: 'generic', executor: { type: 'command', cmd: kCmd } } });
    expect((await runCli('run', dir)).code).toBe(0);
    const pruned = await runCli('cache', dir, '--prune', '--older-than', '30d', '--max-size', '1G');
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^Removed 0 entries, kept 2: .* -> .* in /);
    const all = await runCli('cache', dir, '--max-size', '0', '--json');
    expect(JSON.parse(all.stdout)).toMatchObject({ removed: 2, kept: 0 });
  });

  test('a bad age or size, --prune without a limit, or two actions: exit 2, naming the flag', async () => {
    const dir = buildSession(rows);
    const cases: [string[], RegExp][] = [
      [['--older-than', '30x'], /--older-than.*e\.g\. `--older-than 30d`.*got `30x`/],
      [['--prune', '--max-size', 'big'], /--max-size.*e\.g\. `--max-size 1G`.*got `big`/],
      [['--prune'], /--prune.*--older-than <age>.*--max-size <size>/],
      [['--clear', '--stats'], /one of --stats, --prune and --clear, got --stats and --clear/],
    ];
    for (const [flags, message] of cases) {
      const result = await runCli('cache', dir, ...flags);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe('cache_dir in session.json', () => {
  test('two sessions naming one folder share it: the second takes the first\'s results, and its stats show the shared folder', async () => {
    const root = buildSession(null);
    const config = { pipeline: 'generic', executor: { type: 'command', cmd: "echo \"done $CSV_WAVE_TASK_ID\" >> ../runs.log; echo done" }, cache_dir: '../shared-cache' };
    const rows = [{ id: 'A', description: 'same' }];
    const first = buildSession(rows, { session: config, dir: join(root, 'one') });
    const second = buildSession(rows, { session: config, dir: join(root, 'two') });
    expect((await runCli('run', first)).code).toBe(0);
    const run = await runCli('run', second);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\[CACHED\] A /m);
    expect(readFileSync(join(root, 'runs.log'), 'utf8')).toBe('done A\n');
    expect(existsSync(join(second, '.csv-wave', 'cache'))).toBe(false);
    const stats = await runCli('cache', second);
    expect(stats.stdout).toContain(`Cache: ${join(root, 'shared-cache')} (session.json's cache_dir`);
    expect(stats.stdout).toContain('1 hit(s) recorded');
  });

  test('a cache_dir that is no folder name is an error at its line of session.json', async () => {
    const dir = buildSession([{ id: 'A', description: 'x' }], { session: '{\n  "pipeline": "generic",\n  "cache_dir": ""\n}\n' });
    const result = await runCli('cache', dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/session\.json:3: cache_dir: /);
  });
});
