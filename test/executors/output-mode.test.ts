import { describe, expect, test } from 'vitest';
import { parseTaskOutput } from '../../src/executors/output.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { fixturePath, resultText } from '../helpers/test-files.js';

/** Prints the description: each task's stdout is its description cell. */
const kEcho = 'printf %s {description}';
const kPrettyJson = '{\n  "count": 3,\n  "items": ["a", "b"]\n}';

function outcome(dir: string, id: string): [string, string, string] {
  const row = readRows(dir).get(id)!;
  return [row.status, row.findings, row.error];
}

describe('--output auto (the default)', () => {
  test('JSON that is not a result (no status or findings key) is text, as jq, curl or docker inspect print it', async () => {
    const dir = buildSession([
      { id: 'JQ', description: '{"count": 3}', role: 'r' },
      { id: 'PRETTY', description: kPrettyJson, role: 'r' },
      { id: 'LOGS', description: 'fetching…\n{"id": 7, "name": "x"}', role: 'r' },
      { id: 'RESULT', description: resultText({ findings: 'a result', gc_signal: 'CONVERGED' }), role: 'r' },
      { id: 'LASTLINE', description: `working\n${resultText({ status: 'completed', findings: 'from the last line' })}`, role: 'r' },
    ]);
    const run = await runCli('run', dir, '--cmd', kEcho);
    expect(run.code, run.stdout).toBe(0);
    expect(outcome(dir, 'JQ')).toEqual(['completed', '{"count": 3}', '']);
    expect(outcome(dir, 'PRETTY')).toEqual(['completed', kPrettyJson, '']);
    expect(outcome(dir, 'LOGS')).toEqual(['completed', 'fetching…\n{"id": 7, "name": "x"}', '']);
    expect(outcome(dir, 'RESULT')).toEqual(['completed', 'a result', '']);
    expect(readRows(dir).get('RESULT')!.gc_signal).toBe('CONVERGED');
    expect(outcome(dir, 'LASTLINE')).toEqual(['completed', 'from the last line', '']);
  });

  test('broken JSON still fails, and the message names --output text', async () => {
    const dir = buildSession([{ id: 'BROKEN', description: '{"findings": "unterminated', role: 'r' }]);
    expect((await runCli('run', dir, '--cmd', kEcho)).code).toBe(1);
    expect(readRows(dir).get('BROKEN')!.error).toMatch(/not valid JSON .*; pass --output text to take stdout as text$/);
  });
});

describe('--output text', () => {
  test('stdout is the findings whatever it looks like, a result object included', async () => {
    const looksLikeResult = resultText({ status: 'failed', findings: 'not really' });
    const dir = buildSession([
      { id: 'JSON', description: looksLikeResult, role: 'r' },
      { id: 'BROKEN', description: '{"findings": "unterminated', role: 'r' },
      { id: 'PLAIN', description: '  plain text  ', role: 'r' },
    ]);
    const run = await runCli('run', dir, '--cmd', kEcho, '--output', 'text');
    expect(run.code, run.stdout).toBe(0);
    expect(outcome(dir, 'JSON')).toEqual(['completed', looksLikeResult, '']);
    expect(outcome(dir, 'BROKEN')).toEqual(['completed', '{"findings": "unterminated', '']);
    expect(outcome(dir, 'PLAIN')).toEqual(['completed', 'plain text', '']);
  });

  test('from session.json; the flag wins over it', async () => {
    const rows = [{ id: 'R', description: resultText({ findings: 'the result' }), role: 'r' }];
    const config = (output: string) => ({ 'session.json': JSON.stringify({ pipeline: 'generic', output }) });
    const fromFile = buildSession(rows, { files: config('text') });
    expect((await runCli('run', fromFile, '--cmd', kEcho)).code).toBe(0);
    expect(outcome(fromFile, 'R')[1]).toBe(rows[0]!.description);
    const flagWins = buildSession(rows, { files: config('text') });
    expect((await runCli('run', flagWins, '--cmd', kEcho, '--output', 'auto')).code).toBe(0);
    expect(outcome(flagWins, 'R')[1]).toBe('the result');
  });
});

describe('--output result', () => {
  test('requires a result object: text and non-result JSON fail the task, a result passes', async () => {
    const dir = buildSession([
      { id: 'TEXT', description: 'just text', role: 'r' },
      { id: 'JQ', description: '{"count": 3}', role: 'r' },
      { id: 'OK', description: resultText({ findings: 'fine' }), role: 'r' },
    ]);
    const run = await runCli('run', dir, '--cmd', kEcho, '--output', 'result');
    expect(run.code).toBe(1);
    expect(outcome(dir, 'TEXT')).toEqual([
      'failed',
      '',
      'Invalid output: --output result needs a JSON result object on stdout or its last line, and stdout was text',
    ]);
    // Taken as a result, it fails the result schema naming the key.
    expect(outcome(dir, 'JQ')[0]).toBe('failed');
    expect(outcome(dir, 'JQ')[2]).toMatch(/^Invalid result: .*count/);
    expect(outcome(dir, 'OK')).toEqual(['completed', 'fine', '']);
  });
});

describe('bad --output', () => {
  test('a mode that does not exist, or a mode other than auto for a module, is a usage error before any task starts', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const unknown = await runCli('run', dir, '--cmd', kEcho, '--output', 'json');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/auto, result, text/);
    const module = await runCli('run', dir, '--module', fixturePath('module-ok.mjs'), '--output', 'text');
    expect(module.code).toBe(2);
    expect(module.stderr).toMatch(/`output` \(--output text\) is for commands \(--cmd\)/);
    // Nothing ran and tasks.csv was not rewritten: the status cell is still empty.
    expect(readRows(dir).get('A')!.status).toBe('');
  });
});

describe('output longer than max_stdout_bytes', () => {
  const cut = (tail: string) => ({ keptBytes: 1024, totalBytes: 4096, tail });
  const head = `{"items": [${'1,'.repeat(500)}`;

  test('auto: a non-result object on the last line of the end is text; a result there is the result', () => {
    expect(parseTaskOutput('log\n', cut('…\n{"count": 3}\n'))).toMatchObject({ kind: 'result', result: { findings: 'log' } });
    expect(parseTaskOutput('log\n', cut('…\n{"findings": "end"}\n'))).toMatchObject({ kind: 'result', result: { findings: 'end' } });
  });

  test('text: the kept head is the findings even when it starts like JSON; result: a cut without a result fails', () => {
    expect(parseTaskOutput(head, cut('…1,1]}\n'), 'text')).toMatchObject({ kind: 'result', result: { findings: head } });
    expect(parseTaskOutput('plain', cut('…\nplain\n'), 'result')).toMatchObject({
      kind: 'error',
      errorClass: 'invalid-output',
      error: expect.stringMatching(/--output result needs a JSON result object/),
    });
  });
});
