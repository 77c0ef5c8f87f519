import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/cache/canonical-json.js';
import { cacheStats } from '../../src/cache/cache-housekeeping.js';
import { CacheStore, kUsesHeader } from '../../src/cache/cache-store.js';
import { kCacheFormat } from '../../src/cache/task-key.js';
import { CacheFolder } from '../../src/session/files/cache-folder.js';
import { SecretScrubber } from '../../src/text/secret-scrubber.js';
import { buildSession } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

// Issue 25 item 7: `cache --prune` killed with SIGKILL at any point leaves a cache where every
// entry it was to keep still reads, and none reads wrong; a prune run again finishes the work.

const kPacks = 24;
const kPerPack = 40;
const kDay = 86_400_000;

const keyOf = (n: number) => sha256(`entry ${n}`);
const findingsOf = (n: number) => `findings ${n} `.repeat(2000);
/** Every other entry was taken by a run today: the prune keeps those. */
const kept = (n: number) => n % 2 === 0;

/** An entry line as a run writes it, made a year ago. */
function line(n: number): string {
  const reply = { kind: 'finished', status: 'completed', findings: findingsOf(n), gc_signal: '', severity_summary: '', error: '', discoveries: [], wisdom: {}, artifacts: [] };
  const json = JSON.stringify({ format: kCacheFormat, key: keyOf(n), task: `T${n}`, created_at: new Date(Date.now() - 365 * kDay).toISOString(), inputs: [['cell:id', `T${n}`]], reply, requests: [], cost_usd: null });
  return `${keyOf(n)} ${sha256(json)} ${json}\n`;
}

function cacheWithOldEntries(): string {
  const dir = buildSession([{ id: 'A', description: 'a task' }]);
  const packs = join(dir, '.csv-wave', 'cache', 'packs');
  mkdirSync(packs, { recursive: true });
  const uses = [kUsesHeader];
  for (let p = 0; p < kPacks; p++) {
    const entries = Array.from({ length: kPerPack }, (_, i) => p * kPerPack + i);
    writeFileSync(join(packs, `20250101T0000000${String(p).padStart(2, '0')}Z-1-${p}.pack`), entries.map(line).join(''));
    for (const n of entries) if (kept(n)) uses.push(`${keyOf(n)} 1 ${Date.now()}`);
  }
  writeFileSync(join(packs, '20261201T000000000Z-1-u.uses'), `${uses.join('\n')}\n`);
  return dir;
}

/** Files of the packs' folder the prune made: a new pack, index or uses file, or a temporary. */
function madeByPrune(dir: string, before: ReadonlySet<string>): number {
  try {
    return readdirSync(join(dir, '.csv-wave', 'cache', 'packs')).filter((name) => !before.has(name)).length;
  } catch {
    return 0;
  }
}

/** Every entry kept reads whole and right; no entry reads as another's. */
function checkEntries(dir: string): void {
  const store = new CacheStore(CacheFolder.of(dir, undefined), () => {}, new SecretScrubber([]));
  for (let n = 0; n < kPacks * kPerPack; n++) {
    const entry = store.read(keyOf(n));
    if (kept(n)) expect(entry?.reply.findings, `entry ${n}`).toBe(findingsOf(n));
    else if (entry !== undefined) expect(entry.reply.findings).toBe(findingsOf(n));
  }
}

describe('kill -9 while the cache is pruned', () => {
  it('killed as its new packs appear, twice: every entry to keep still reads, none reads wrong; a prune again leaves exactly them', { timeout: 300_000 }, async () => {
    const dir = cacheWithOldEntries();
    const packs = join(dir, '.csv-wave', 'cache', 'packs');
    const signals: (string | null)[] = [];
    for (const made of [1, 9]) {
      const before = new Set(readdirSync(packs));
      const prune = spawnCli('cache', dir, '--prune', '--older-than', '30d');
      // Killed once it wrote this many files (a safety net, not a measure), or when it ended first.
      await waitFor(() => madeByPrune(dir, before) >= made || prune.child.exitCode !== null, `the prune to write ${made} file(s)`);
      prune.child.kill('SIGKILL');
      const result = await prune.exited;
      expect(result.stderr).toBe('');
      signals.push(result.signal);
      checkEntries(dir);
    }
    // The first kill lands after the prune's first file, long before its last.
    expect(signals[0]).toBe('SIGKILL');
    const last = await spawnCli('cache', dir, '--prune', '--older-than', '30d', '--json').exited;
    expect(last.code, last.stderr).toBe(0);
    checkEntries(dir);
    expect(cacheStats(CacheFolder.of(dir, undefined))).toMatchObject({ entries: (kPacks * kPerPack) / 2, broken: 0, hits: (kPacks * kPerPack) / 2 });
  });
});
