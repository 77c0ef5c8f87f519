import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendFromConfig } from '../../src/backend/backend-choice.js';
import { isJobOfRun, isJobOfSession, jobIdOf, kRunIdPattern, kSessionIdPattern, newRunId, queueNameOf } from '../../src/backend/bullmq/jobs/names.js';
import { maskRedisUrl, redisUrlFrom } from '../../src/backend/bullmq/redis/redis-url.js';
import { readSessionId, sessionIdOf } from '../../src/session/files/session-id.js';
import { buildSession } from '../helpers/session-builder.js';
import { expectWaveError } from '../helpers/wave-error.js';

describe('bullmq names', () => {
  it('gives every attempt of every run its own job id, without the `:` BullMQ refuses', () => {
    const runs = [newRunId(), newRunId()];
    expect(runs[0]).toMatch(kRunIdPattern);
    expect(runs[0]).not.toBe(runs[1]);
    const ids = runs.flatMap((run) => ['A', 'A.1', 'A.1.a2', 'x-y_z'].flatMap((task) => [1, 2, 12].map((attempt) => jobIdOf('s1', run, task, attempt))));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).not.toContain(':');
    expect(jobIdOf('s1', runs[0]!, 'A', 2)).toBe(jobIdOf('s1', runs[0]!, 'A', 2));
    expect(jobIdOf('s1', '0123456789ab', 'A', 2)).toBe('s1.r0123456789ab.A.a2');
    expect(isJobOfRun(jobIdOf('s1', runs[0]!, 'A', 1), 's1', runs[0]!)).toBe(true);
    expect(isJobOfRun(jobIdOf('s1', runs[1]!, 'A', 1), 's1', runs[0]!)).toBe(false);
    expect(isJobOfSession(jobIdOf('s1', runs[0]!, 'A', 1), 's1')).toBe(true);
    expect(isJobOfSession(jobIdOf('s2', runs[0]!, 'A', 1), 's1')).toBe(false);
    expect(isJobOfSession('s1.A.a1', 's1')).toBe(false);
    expect(queueNameOf('s1')).not.toContain(':');
  });

  it('keeps the session id across runs, in .csv-wave/session-id, with the folder it was made in', () => {
    const dir = buildSession('id,description,role\n', { session: null });
    const warnings: string[] = [];
    const first = sessionIdOf(dir, (line) => warnings.push(line));
    expect(first).toMatch(kSessionIdPattern);
    expect(sessionIdOf(dir, (line) => warnings.push(line))).toBe(first);
    expect(readSessionId(dir)).toBe(first);
    const [id, folder] = readFileSync(join(dir, '.csv-wave', 'session-id'), 'utf8').split('\n');
    expect(id).toBe(first);
    const stat = statSync(dir, { bigint: true });
    expect(JSON.parse(folder!)).toEqual({ dev: String(stat.dev), ino: String(stat.ino), path: realpathSync(dir) });
    expect(warnings).toEqual([]);
  });

  it('gives a copy of the folder (cp -r) an id of its own, saying so; a move keeps the id', () => {
    const original = buildSession('id,description,role\n', { session: null });
    const id = sessionIdOf(original, () => undefined);
    const copy = join(mkdtempSync(join(tmpdir(), 'csv-wave-copy-')), 'copy');
    cpSync(original, copy, { recursive: true });
    const warnings: string[] = [];
    const copyId = sessionIdOf(copy, (line) => warnings.push(line));
    expect(copyId).not.toBe(id);
    expect(copyId).toMatch(kSessionIdPattern);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`made in the folder ${realpathSync(original)}`);
    expect(warnings[0]).toContain(`${copyId} (it was ${id})`);
    // The copy's own from now on; the original keeps its id.
    expect(sessionIdOf(copy, (line) => warnings.push(line))).toBe(copyId);
    expect(sessionIdOf(original, (line) => warnings.push(line))).toBe(id);
    // A move within a file system keeps the inode: the same session, its new path recorded.
    const moved = join(dirname(copy), 'moved');
    renameSync(copy, moved);
    expect(sessionIdOf(moved, (line) => warnings.push(line))).toBe(copyId);
    expect(readFileSync(join(moved, '.csv-wave', 'session-id'), 'utf8')).toContain(JSON.stringify(realpathSync(moved)));
    expect(warnings).toHaveLength(1);
  });

  it('adopts an id file of an older csv-wave (the id alone) as this folder\'s', () => {
    const dir = buildSession('id,description,role\n', { session: null });
    mkdirSync(join(dir, '.csv-wave'));
    writeFileSync(join(dir, '.csv-wave', 'session-id'), 'old-id\n');
    const warnings: string[] = [];
    expect(sessionIdOf(dir, (line) => warnings.push(line))).toBe('old-id');
    expect(readFileSync(join(dir, '.csv-wave', 'session-id'), 'utf8').split('\n')[1]).toContain(`"ino":"${statSync(dir, { bigint: true }).ino}"`);
    expect(warnings).toEqual([]);
    writeFileSync(join(dir, '.csv-wave', 'session-id'), 'a:b\n');
    expectWaveError(() => sessionIdOf(dir, () => undefined), { code: 'INVALID_SESSION', message: /holds no session id/ });
  });

  it('masks the password of a Redis URL', () => {
    expect(maskRedisUrl('redis://user:s3cret@10.0.0.1:6379/2')).toBe('redis://user:***@10.0.0.1:6379/2');
    expect(maskRedisUrl('redis://:s3cret@host:6379')).not.toContain('s3cret');
    expect(maskRedisUrl('redis://host:6379')).toBe('redis://host:6379');
  });

  it('takes only redis:// and rediss:// URLs', () => {
    expect(redisUrlFrom('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expectWaveError(() => redisUrlFrom('http://:pw@127.0.0.1:6379'), { code: 'USAGE', message: /--redis.*http:\/\/:\*\*\*@/ });
  });

  it("reads session.json's backend: bullmq needs a URL there or in CSV_WAVE_REDIS_URL", () => {
    const saved = process.env['CSV_WAVE_REDIS_URL'];
    delete process.env['CSV_WAVE_REDIS_URL'];
    try {
      expect(backendFromConfig(undefined)).toEqual({ type: 'local' });
      expect(backendFromConfig({ type: 'bullmq', url: 'redis://h:1' })).toEqual({ type: 'bullmq', url: 'redis://h:1' });
      expectWaveError(() => backendFromConfig({ type: 'bullmq' }), { code: 'INVALID_SESSION', message: /needs "url"/ });
      expectWaveError(() => backendFromConfig({ type: 'bullmq', url: 'h:1' }), { code: 'INVALID_SESSION', message: /backend\.url/ });
      process.env['CSV_WAVE_REDIS_URL'] = 'redis://env:2';
      expect(backendFromConfig({ type: 'bullmq' })).toEqual({ type: 'bullmq', url: 'redis://env:2' });
    } finally {
      if (saved === undefined) delete process.env['CSV_WAVE_REDIS_URL'];
      else process.env['CSV_WAVE_REDIS_URL'] = saved;
    }
  });
});
