import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisForFile } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';

/**
 * Every file of the folder with its bytes: what a refused run must leave as it was. The
 * session id file is left out: a run may note there which folder the id was made in (the
 * folder's own record, whatever the run does).
 */
function folderBytes(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (name === join('.csv-wave', 'session-id')) continue;
    const path = join(dir, name);
    if (statSync(path).isFile()) files.set(name, readFileSync(path, 'latin1'));
  }
  return files;
}

const redis = redisForFile();

/**
 * A bullmq run is refused when another run holds its session id, or when it asks for
 * --batch too. It is refused before its first write: a `rerun` refused so must not have
 * reset the results it chose (they would be lost with nothing run in their place).
 */
describe.runIf(kRunRedisTests)('a bullmq run that is refused leaves its session folder as it was', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(redis.url);
  });
  afterAll(() => client.disconnect());

  it('a session id held by a run on another machine: run and rerun --task are refused with exit 3, and write nothing', { timeout: 300_000 }, async () => {
    const dir = buildSession(
      [
        { id: 'A', description: 'a', role: 'worker', status: 'completed', findings: 'kept-A' },
        { id: 'B', description: 'b', role: 'worker', deps: 'A' },
      ],
      { sessionId: 'held-by-another' },
    );
    // A coordinator elsewhere, beating now (its pid means nothing here).
    const key = 'csv-wave:lease:held-by-another';
    await client.hset(key, { run: 'bbbbbbbbbbbb', hostname: 'another-host', pid: '999999', folder: '/srv/other', beat: String(Date.now()) });
    await client.pexpire(key, 600_000);
    const before = folderBytes(dir);
    const args = ['--cmd', 'echo ran-{id}', '--backend', 'bullmq', '--redis', redis.url];
    for (const command of [['run', dir], ['rerun', dir, '--task', 'A']]) {
      const refused = await runCli(...command, ...args);
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stderr).toMatch(/locked by another run on another-host \(pid 999999, folder \/srv\/other\)/);
      expect(folderBytes(dir)).toEqual(before);
    }
    await client.del(key);
  });

  it('--batch with --backend bullmq: refused with exit 2 before anything is written', { timeout: 300_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'batch-and-bullmq' });
    const before = folderBytes(dir);
    const refused = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1', '--batch', '--backend', 'bullmq', '--redis', redis.url);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('does not go with --backend bullmq');
    expect(folderBytes(dir)).toEqual(before);
  });
});
