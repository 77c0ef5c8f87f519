import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/cache/canonical-json.js';
import { CacheStore } from '../../src/cache/cache-store.js';
import { CacheFolder } from '../../src/session/files/cache-folder.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { fixturePath } from '../helpers/test-files.js';

// Issue 25: kill -9 during a cache write leaves no entry that reads as valid but wrong; a
// resume takes what was written and completes every task with the result executing gives.

const kTasks = 300;

function packBytes(dir: string): number {
  const packs = join(dir, '.csv-wave', 'cache', 'packs');
  try {
    return readdirSync(packs)
      .filter((name) => name.endsWith('.pack'))
      .reduce((sum, name) => sum + readFileSync(join(packs, name)).length, 0);
  } catch {
    return 0;
  }
}

/** Every line of the session's packs that starts like an entry, by key. */
function packedKeys(dir: string): string[] {
  const packs = join(dir, '.csv-wave', 'cache', 'packs');
  const keys: string[] = [];
  for (const name of readdirSync(packs).filter((file) => file.endsWith('.pack'))) {
    for (const line of readFileSync(join(packs, name), 'utf8').split('\n')) {
      const match = /^([0-9a-f]{64}) [0-9a-f]{64} /.exec(line);
      if (match) keys.push(match[1]!);
    }
  }
  return keys;
}

describe('kill -9 while the cache is written', () => {
  it(`${kTasks} tasks with big results, the run killed three times as its packs grow: every entry reads as the task's own result or not at all, and resume completes them all`, { timeout: 600_000 }, async () => {
    const rows = Array.from({ length: kTasks }, (_, i) => ({ id: `K${String(i).padStart(3, '0')}`, description: `task ${i}`, role: 'r', ...(i >= 100 ? { deps: `K${String(i - 100).padStart(3, '0')}` } : {}) }));
    const dir = buildSession(rows);
    const module = fixturePath('cache-big.mjs');
    let killedAt = 0;
    for (const grow of [300_000, 600_000, 600_000]) {
      const run = spawnCli('run', dir, '--module', module, '--concurrency', '8');
      const target = killedAt + grow;
      // Killed once the packs hold this many more bytes: a run is writing them (a safety net, not a measure).
      await waitFor(() => packBytes(dir) >= target || run.child.exitCode !== null, `the packs to grow past ${target} bytes`);
      run.child.kill('SIGKILL');
      await run.exited;
      killedAt = packBytes(dir);

      const warnings: string[] = [];
      const store = new CacheStore(CacheFolder.of(dir, undefined), (message) => warnings.push(message));
      let valid = 0;
      for (const key of packedKeys(dir)) {
        const entry = store.read(key);
        if (entry === undefined) continue;
        valid++;
        // An entry that reads is whole and is its task's: its key, its result.
        expect(entry.key).toBe(key);
        expect(entry.reply.findings).toBe(`out ${entry.task}`);
        expect(entry.reply.artifacts[0]!.content).toBe(`${entry.task} `.repeat(2000));
        expect(sha256(JSON.stringify(entry.inputs))).toBe(key);
      }
      expect(valid).toBeGreaterThan(0);
      for (const warning of warnings) expect(warning).toMatch(/^cache: /);
    }
    const resumed = spawnCli('resume', dir, '--module', module, '--concurrency', '8');
    const done = await resumed.exited;
    expect(done.code, done.stderr).toBe(0);
    const final = readRows(dir);
    for (const row of rows) expect(final.get(row.id), row.id).toMatchObject({ status: 'completed', findings: `out ${row.id}` });
    for (const row of rows.slice(0, 5)) expect(readFileSync(join(dir, 'artifacts', row.id, 'big.md'), 'utf8')).toBe(`${row.id} `.repeat(2000));
  });
});
