import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { sha256 } from '../../src/cache/canonical-json.js';
import { CacheStore, indexName } from '../../src/cache/cache-store.js';
import { kCacheFormat } from '../../src/cache/task-key.js';
import type { FinishedAttempt } from '../../src/executors/messages.js';
import { CacheFolder } from '../../src/session/files/cache-folder.js';
import { SecretScrubber } from '../../src/text/secret-scrubber.js';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import { buildSession } from '../helpers/session-builder.js';

// Issue 25 item 2: entries are checked by their digest when read; a missing, corrupt,
// truncated, foreign or unreadable entry is a miss with a warning, never a wrong result.

/** A completed attempt of T with these findings, and one artifact when `artifact` is given. */
function reply(findings: string, artifact = ''): FinishedAttempt {
  return finishedAttempt({
    findings,
    artifacts: artifact === '' ? [] : [{ name: 'output', content: artifact }],
    discovery: { taskId: 'T', role: 'r', status: 'completed', findings, error: null, artifacts: [] },
  });
}

const keyOf = (n: number) => sha256(`key ${n}`);
const inputs = (n: number) => JSON.stringify([['format', kCacheFormat], ['cell:id', `T${n}`]]);

/** A store of a fresh session with `count` entries written and closed; its warnings. */
function storeWith(count: number, scrubber?: SecretScrubber): { dir: string; warnings: string[]; store: () => CacheStore; packs: string } {
  const dir = buildSession(null);
  const warnings: string[] = [];
  const store = () => new CacheStore(CacheFolder.of(dir, undefined), (message) => warnings.push(message), scrubber ?? new SecretScrubber([]));
  const writer = store();
  for (let n = 0; n < count; n++) writer.write(keyOf(n), `T${n}`, inputs(n), reply(`findings ${n}`), [], n === 0 ? 0.5 : null);
  writer.close();
  return { dir, warnings, store, packs: join(dir, '.csv-wave', 'cache', 'packs') };
}

function packFile(packs: string): string {
  return join(packs, readdirSync(packs).find((name) => name.endsWith('.pack'))!);
}

describe('the result cache on disk', () => {
  test('an entry written is read back whole, by its index, or by its pack alone when the index is gone', () => {
    const { store, packs, warnings } = storeWith(3);
    const entry = store().read(keyOf(1));
    expect(entry).toMatchObject({ format: kCacheFormat, key: keyOf(1), task: 'T1', reply: { findings: 'findings 1' }, requests: [], cost_usd: null });
    expect(entry!.inputs).toEqual([['format', kCacheFormat], ['cell:id', 'T1']]);
    expect(store().read(keyOf(0))!.cost_usd).toBe(0.5);
    // A killed run leaves its pack without an index: the pack is read line by line.
    rmSync(join(packs, indexName(readdirSync(packs).find((name) => name.endsWith('.pack'))!)));
    expect(store().read(keyOf(2))).toMatchObject({ task: 'T2' });
    expect(store().read(sha256('no such key'))).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  test('a changed byte is a miss with a warning, and the entries around it still read', () => {
    const { store, packs, warnings } = storeWith(3);
    const pack = packFile(packs);
    const text = readFileSync(pack, 'utf8');
    writeFileSync(pack, text.replace('findings 1', 'findings 9'));
    const reader = store();
    expect(reader.read(keyOf(1))).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/^cache: the entry [0-9a-f]{12} in .*\.pack does not match its digest .*: not used, the task runs$/)]);
    // Forgotten once refused: no second warning.
    expect(reader.read(keyOf(1))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(reader.read(keyOf(0))).toMatchObject({ task: 'T0' });
    expect(reader.read(keyOf(2))).toMatchObject({ task: 'T2' });
  });

  test('a pack cut short is a miss for the cut entry: indexed, it warns; without its index, its line is no entry', () => {
    const { store, packs, warnings } = storeWith(3);
    const pack = packFile(packs);
    const size = readFileSync(pack).length;
    for (const cut of [size - 1, size - 40, size - 300]) {
      truncateSync(pack, cut);
      expect(store().read(keyOf(2)), `cut at ${cut}`).toBeUndefined();
    }
    expect(warnings.length).toBe(3);
    expect(warnings.every((warning) => /is cut short or not an entry|cannot be read|does not match/.test(warning))).toBe(true);
    rmSync(join(packs, indexName(pack.split('/').at(-1)!)));
    warnings.length = 0;
    const reader = store();
    expect(reader.read(keyOf(2))).toBeUndefined();
    expect(reader.read(keyOf(1))).toMatchObject({ task: 'T1' });
    expect(warnings).toEqual([]);
  });

  test('a foreign entry (another key inside, another format) is a miss with a warning', () => {
    const { store, packs, warnings } = storeWith(2);
    const pack = packFile(packs);
    const lines = readFileSync(pack, 'utf8').split('\n');
    // Entry 1's line under entry 0's key, with a right digest: a line copied or forged into place.
    const foreign = (json: string) => `${keyOf(0)} ${sha256(json)} ${json}`;
    const json1 = lines[1]!.slice(130);
    writeFileSync(pack, `${foreign(json1)}\n${lines[1]}\n`);
    rmSync(join(packs, indexName(pack.split('/').at(-1)!)));
    expect(store().read(keyOf(0))).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/holds another key/);
    const other = json1.replace(keyOf(1), keyOf(0)).replace(`"format":"${kCacheFormat}"`, '"format":"csv-wave-cache/0"');
    writeFileSync(pack, `${foreign(other)}\n`);
    expect(store().read(keyOf(0))).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/is of another format \(csv-wave-cache\/0, this csv-wave reads csv-wave-cache\/1\)/);
    writeFileSync(pack, `${foreign('{"format":"csv-wave-cache/1","key":"x"}')}\n`);
    expect(store().read(keyOf(0))).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/holds another key|not an entry/);
  });

  test('an unreadable pack, or a packs folder that is no folder, is a miss with a warning, never a crash', () => {
    const { store, packs, warnings } = storeWith(1);
    const pack = packFile(packs);
    rmSync(pack);
    mkdirSync(pack);
    expect(store().read(keyOf(0))).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/cannot be read/);
    const dir = buildSession(null, { files: { '.csv-wave/cache/packs': 'a file' } });
    const said: string[] = [];
    const broken = new CacheStore(CacheFolder.of(dir, undefined), (message) => said.push(message));
    expect(broken.read(keyOf(0))).toBeUndefined();
    broken.write(keyOf(0), 'T0', inputs(0), reply('x'), [], null);
    broken.write(keyOf(1), 'T1', inputs(1), reply('y'), [], null);
    broken.close();
    expect(said.filter((message) => message.includes('are no longer written'))).toHaveLength(1);
  });

  test('a shared cache_dir holds the entries of every session that names it', () => {
    const shared = buildSession(null);
    const one = buildSession(null);
    const other = buildSession(null);
    const writer = new CacheStore(CacheFolder.of(one, join(shared, 'cache')), () => {});
    writer.write(keyOf(7), 'T7', inputs(7), reply('shared'), [], null);
    writer.close();
    expect(readdirSync(join(shared, 'cache', 'packs'))).toHaveLength(2);
    expect(new CacheStore(CacheFolder.of(other, join(shared, 'cache')), () => {}).read(keyOf(7))).toMatchObject({ reply: { findings: 'shared' } });
    // A relative cache_dir is relative to the session folder.
    expect(CacheFolder.of(one, '../x').dir).toBe(join(one, '..', 'x'));
  });

  test('no secret of the environment is written in an entry', () => {
    const secret = 'sk-live-abcdefghijklmnop';
    const { packs } = storeWith(0);
    const dir = packs.slice(0, -'/.csv-wave/cache/packs'.length);
    const writer = new CacheStore(CacheFolder.of(dir, undefined), () => {}, new SecretScrubber([secret]));
    writer.write(keyOf(1), 'T1', inputs(1), reply(`the key is ${secret}`, `full text with ${secret}`), [{ request: 1, kind: 'first', model: secret, prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, reported: true }], 0.001);
    writer.close();
    const text = readFileSync(packFile(packs), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain('the key is ***');
  });

  test('a pack the folder cannot take stops the writes, said once; reads go on', () => {
    const dir = buildSession(null);
    mkdirSync(join(dir, '.csv-wave', 'cache', 'packs'), { recursive: true });
    const warnings: string[] = [];
    const store = new CacheStore(CacheFolder.of(dir, undefined), (message) => warnings.push(message));
    // root may write anywhere: the folder is made a file instead of unwritable.
    rmSync(join(dir, '.csv-wave', 'cache', 'packs'), { recursive: true });
    writeFileSync(join(dir, '.csv-wave', 'cache', 'packs'), '');
    chmodSync(join(dir, '.csv-wave', 'cache', 'packs'), 0o444);
    store.write(keyOf(1), 'T1', inputs(1), reply('x'), [], null);
    store.close();
    expect(warnings).toEqual([expect.stringMatching(/^cache: results are no longer written to .* in this run: /)]);
  });
});
