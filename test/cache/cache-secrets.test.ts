import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { readLastRun, recordLastRun } from '../../src/cache/last-run.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';

// Issue 25: secrets appear in no key and no entry, nor in the record of the last run.

const kSecret = 'tok-live-0123456789abcdef';

afterEach(() => {
  delete process.env['CACHE_TEST_TOKEN'];
});

/** Every file under a folder, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

describe('secrets and the cache', () => {
  test('a secret of the environment in a cell and in a result is in no entry and no key: the key counts it as ***', async () => {
    process.env['CACHE_TEST_TOKEN'] = kSecret;
    const dir = buildSession([
      { id: 'S', description: `log in with ${kSecret}`, role: 'r' },
      { id: 'T', description: 'log in with ***', role: 'r' },
    ]);
    const run = await runCli('run', dir, '--cmd', 'echo "used: {description} and $CACHE_TEST_TOKEN"');
    expect(run.code, run.stderr).toBe(0);
    const cache = join(dir, '.csv-wave', 'cache');
    expect(allText(cache)).not.toContain(kSecret);
    expect(allText(cache)).toContain('log in with ***');
    expect(readFileSync(join(dir, 'attempts.ndjson'), 'utf8')).not.toContain(kSecret);
    expect(readFileSync(join(dir, '.csv-wave', 'last-run.json'), 'utf8')).not.toContain(kSecret);
  });

  test('the last run\'s record keeps no user or password of a base URL, nor a secret in an agent\'s arguments', () => {
    process.env['CACHE_TEST_TOKEN'] = kSecret;
    const dir = buildSession(null);
    const files = new SessionWriter(dir);
    recordLastRun(files, { executor: { type: 'openai', model: 'm', baseUrl: 'http://alice:hunter2-password@127.0.0.1:9/v1' }, workdir: 'session', limits: {}, prev_context_cap: 16000 });
    let text = readFileSync(join(dir, '.csv-wave', 'last-run.json'), 'utf8');
    expect(text).not.toContain('hunter2-password');
    expect(text).not.toContain('alice');
    expect(readLastRun(dir)?.executor).toEqual({ type: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:9/v1' });
    recordLastRun(files, {
      executor: { type: 'codex', model: 'gpt-x', args: ['--token', kSecret], roles: { r: { baseUrl: 'https://bob:pw-secret-9@example.com/v1' } } },
      workdir: 'task',
      limits: { maxStdoutBytes: 4096 },
      prev_context_cap: 200,
    });
    text = readFileSync(join(dir, '.csv-wave', 'last-run.json'), 'utf8');
    expect(text).not.toContain(kSecret);
    expect(text).not.toContain('pw-secret-9');
    expect(readLastRun(dir)).toMatchObject({ workdir: 'task', limits: { maxStdoutBytes: 4096 }, prev_context_cap: 200, executor: { type: 'codex', args: ['--token', '***'] } });
  });
});
