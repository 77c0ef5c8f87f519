/**
 * Output nested thousands of levels deep (issue 9, defect 3): it used to parse and
 * serialise in the worker, then fail to be cloned back to the main thread, so its task
 * stayed running for ever (no timeout helped). Now such output fails its task as invalid
 * output, and a reply the main thread cannot read fails its task too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { kMaxJsonDepth, nestsDeeperThan } from '../../src/text/json-depth.js';
import type { AttemptRequest, ExecutorSpec } from '../../src/executors/messages.js';
import { replyText } from '../../src/executors/worker.js';
import { readReply } from '../../src/backend/local/pool-replies.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { expectOthersIntact, hostileSession, kBystanders, runScripts } from './helpers.js';

const kModule = new URL('./fixtures/deep-module.mjs', import.meta.url).pathname;
const kTooDeep = 'it nests objects and arrays deeper than 128 levels, the most csv-wave reads';

/** A shell line printing a result whose discovery data is `levels` arrays deep. */
function printDeep(levels: number, before = ''): string {
  const data = `${'['.repeat(levels)}${']'.repeat(levels)}`;
  return `${before}printf '%s\\n' '{"findings":"deep","discoveries":[{"type":"note","data":{"nested":${data}}}]}'`;
}

describe('deeply nested output fails its task instead of hanging the run', () => {
  test('a command printing JSON nested 3,000 and 5,000 levels deep, whole or on its last line', async () => {
    const dir = hostileSession({
      DEEP3K: printDeep(3000),
      DEEP5K: printDeep(5000),
      LASTLINE: printDeep(4000, 'echo working; '),
    });
    // No --timeout: before the fix this run never ended.
    const result = await runScripts(dir, '--retries', '2');
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    for (const id of ['DEEP3K', 'DEEP5K']) {
      expect(rows.get(id)).toMatchObject({
        status: 'failed',
        error: `Invalid output: stdout starts like a JSON result but is not valid JSON (${kTooDeep}); pass --output text to take stdout as text`,
      });
    }
    expect(rows.get('LASTLINE')).toMatchObject({
      status: 'failed',
      error: `Invalid output: the last line of stdout looks like a JSON result but is not valid JSON (${kTooDeep}); pass --output text to take stdout as text`,
    });
    expectOthersIntact(dir);
  });

  test('a module returning an object nested 5,000 levels deep; one within the limit completes', async () => {
    const dir = buildSession([
      { id: 'DEEP', description: 'deep-5000', role: 'r' },
      // The result, the discoveries list, the discovery, its data and `nested` hold the arrays.
      { id: 'FITS', description: `deep-${kMaxJsonDepth - 5}`, role: 'r' },
      ...kBystanders,
    ]);
    const result = await runCli('run', dir, '--module', kModule);
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('DEEP')).toMatchObject({ status: 'failed', error: `Invalid result: ${kTooDeep}` });
    expect(rows.get('FITS')).toMatchObject({ status: 'completed', findings: `nested ${kMaxJsonDepth - 5}` });
    const board = readFileSync(join(dir, 'discoveries.ndjson'), 'utf8').trim().split('\n');
    expect(board.map((line) => (JSON.parse(line) as { worker: string }).worker)).toEqual(['FITS']);
    expectOthersIntact(dir);
  });
});

describe('nesting depth of JSON text', () => {
  test('counts objects and arrays, not brackets inside strings', () => {
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    expect(nestsDeeperThan(nested(kMaxJsonDepth))).toBe(false);
    expect(nestsDeeperThan(nested(kMaxJsonDepth + 1))).toBe(true);
    expect(nestsDeeperThan(`{"a":${nested(kMaxJsonDepth - 1)}}`)).toBe(false);
    expect(nestsDeeperThan(`{"a":{"b":${nested(kMaxJsonDepth - 1)}}}`)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ text: '['.repeat(10_000) }))).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ text: `\\"${'{'.repeat(10_000)}` }))).toBe(false);
    // Sequential objects do not add up.
    expect(nestsDeeperThan(`[${Array.from({ length: 1000 }, () => '{"a":[1]}').join(',')}]`)).toBe(false);
  });
});

describe('a reply the main thread cannot read fails its task', () => {
  test.each([
    ['text that is not JSON', 'not json {', /^Invalid output: the task's reply from its worker thread could not be read \(.*JSON.*\)$/],
    ['JSON that is not a reply', '{"findings":"x"}', /^Invalid output: the task's reply from its worker thread could not be read$/],
    ['JSON null', 'null', /^Invalid output: the task's reply from its worker thread could not be read$/],
    ['no text at all', undefined, /^Invalid output: the task's reply from its worker thread could not be read/],
  ])('%s', (_, text, error) => {
    const reply = readReply(text);
    expect(reply).toMatchObject({ kind: 'error', errorClass: 'invalid-output' });
    expect(reply.kind === 'error' ? reply.error : '').toMatch(error);
  });

  test('a reply that reads is passed on unchanged', () => {
    const reply = { kind: 'error', errorClass: 'timeout', error: 'Timed out after 1s', retryAfterMs: 5 } as const;
    expect(readReply(JSON.stringify(reply))).toEqual(reply);
  });

  test('an attempt that throws in the worker replies with an error as text, which reads back', async () => {
    const request: AttemptRequest = {
      // No executor of this type exists: the attempt throws before any executor runs.
      executor: { type: 'none' } as unknown as ExecutorSpec,
      task: {
        id: 'A',
        wave: 1,
        attempt: 1,
        session: buildSession([{ id: 'A', description: 'a', role: 'r' }]),
        row: { id: 'A' },
        prev_context: '',
        upstream: { deps: [], wisdom: {}, warnings: [] },
      },
      timeoutMs: 0,
    };
    const text = await replyText(request);
    expect(typeof text).toBe('string');
    expect(readReply(text)).toMatchObject({ kind: 'error', errorClass: 'worker-crash', error: expect.stringMatching(/^Worker error: /) });
  });
});
