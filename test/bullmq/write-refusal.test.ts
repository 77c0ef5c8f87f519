import { describe, expect, it } from 'vitest';
import { refusedAtStart, writeRefusal } from '../../src/backend/bullmq/redis/write-refusal.js';
import { WaveError } from '../../src/errors.js';

describe('writeRefusal', () => {
  it("tells Redis's refusals for its state (full, a failed save, a replica) from any other error, in Redis's words", () => {
    const oom = new Error("OOM command not allowed when used memory > 'maxmemory'. script: 5ab432e88830d573e2fa33392ffbd4ad25a9b100, on @user_script:589.");
    expect(writeRefusal(oom)).toEqual({ words: "OOM command not allowed when used memory > 'maxmemory'", remedy: 'free memory in Redis or raise its maxmemory' });
    expect(writeRefusal(new Error('MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.'))?.remedy).toBe(
      'let Redis save to its disk again',
    );
    expect(writeRefusal(new Error("READONLY You can't write against a read only replica."))?.remedy).toBe('point --redis at the primary');
    for (const other of [new Error('Connection is closed.'), new Error('ERR wrong number of arguments'), new Error('OOMPH'), 'OOM', undefined, 42]) {
      expect(writeRefusal(other), String(other)).toBeUndefined();
    }
  });

  it('shows what Redis says cleaned of control characters and cut', () => {
    const refusal = writeRefusal(new Error(`OOM \u001b]0;title\u0007${'x'.repeat(500)}\nsecond line`));
    expect(refusal?.words).not.toMatch(/[\u0000-\u001f]/);
    expect(refusal?.words.length).toBeLessThanOrEqual(201);
    expect(refusal?.words).not.toContain('second line');
  });

  it('makes a refusal at the start a REDIS_REFUSES_WRITES error naming the URL with its password masked; any other error is left as it is', () => {
    const error = refusedAtStart(new Error("OOM command not allowed when used memory > 'maxmemory'."), 'redis://:s3cret@127.0.0.1:6379');
    expect(error).toBeInstanceOf(WaveError);
    expect((error as WaveError).code).toBe('REDIS_REFUSES_WRITES');
    expect((error as WaveError).message).toContain('Redis at redis://:***@127.0.0.1:6379 refuses writes');
    expect((error as WaveError).message).not.toContain('s3cret');
    const other = new Error('Connection is closed.');
    expect(refusedAtStart(other, 'redis://127.0.0.1:6379')).toBe(other);
  });
});
