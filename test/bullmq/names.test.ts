import { describe, expect, it } from 'vitest';
import { backendFromConfig } from '../../src/backend/backend-choice.js';
import { jobIdOf, kSessionIdPattern, queueNameOf } from '../../src/backend/bullmq/names.js';
import { maskRedisUrl, redisUrlFrom } from '../../src/backend/bullmq/redis-url.js';
import { sessionIdOf } from '../../src/backend/bullmq/session-id.js';
import { tempSession } from '../helpers/temp-session.js';
import { expectWaveError } from '../helpers/wave-error.js';

describe('bullmq names', () => {
  it('gives every attempt its own job id, without the `:` BullMQ refuses', () => {
    const ids = ['A', 'A.1', 'A.1.a2', 'x-y_z'].flatMap((task) => [1, 2, 12].map((attempt) => jobIdOf('s1', task, attempt)));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).not.toContain(':');
    expect(jobIdOf('s1', 'A', 2)).toBe(jobIdOf('s1', 'A', 2));
    expect(queueNameOf('s1')).not.toContain(':');
  });

  it('keeps the session id across runs, in .csv-wave/session-id', () => {
    const dir = tempSession('id,description,role\n');
    const first = sessionIdOf(dir);
    expect(first).toMatch(kSessionIdPattern);
    expect(sessionIdOf(dir)).toBe(first);
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
