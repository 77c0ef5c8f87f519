import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisForFile } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';

const kFixture = resolve('test/fixtures/held-requests.mjs');
const kDist = resolve('dist');

const redis = redisForFile();

describe.runIf(kRunRedisTests)('the coordinator memory per queued attempt', () => {
  let sessionDir: string;

  beforeAll(() => {
    sessionDir = mkdtempSync(join(tmpdir(), 'csv-wave-held-'));
  });

  afterAll(() => {
    rmSync(sessionDir, { recursive: true, force: true });
  });

  it('holds no request once its job is in Redis: the requests and their rows are collected while the attempts wait', () => {
    // A child process of its own, for --expose-gc; it prints which requests outlived a full GC.
    const child = spawnSync(process.execPath, ['--expose-gc', kFixture, redis.url, kDist, sessionDir], { encoding: 'utf8', timeout: 120_000 });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const result = JSON.parse(child.stdout.trim()) as { queued: number; held: string[]; pending: number };
    expect(result).toEqual({ queued: 3, held: [], pending: 3 });
  });
});
