/** The small pieces behind the hostile-output guarantees, checked directly. */
import { describe, expect, test } from 'vitest';
import { cleanText } from '../../src/text/clean-text.js';
import { finishAttempt } from '../../src/executors/finish-attempt.js';
import { parseTaskOutput } from '../../src/executors/output.js';
import { mapStrings, SecretScrubber } from '../../src/text/secret-scrubber.js';
import { cutTextBytes, utf8Prefix } from '../../src/text/cut-text.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('cleanText', () => {
  test.each([
    ['\u001b[31mred\u001b[0m', 'red'],
    ['a\u001b]0;title\u0007b', 'ab'],
    ['a\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\', 'alink'],
    ['an OSC left open \u001b]0;ends at the line\nnext', 'an OSC left open \nnext'],
    ['x\u001b(By', 'xy'],
    ['10%\r20%\r\n', '10%\n20%\n'],
    ['n\u0000u\u007fl\u009b2Jz', 'nulz'],
    ['emoji \ud83d\ude00 kept, lone \ud800 and \udc00 replaced', 'emoji \ud83d\ude00 kept, lone \ufffd and \ufffd replaced'],
    ['tab\tand newline\n stay', 'tab\tand newline\n stay'],
  ])('%j → %j', (input, output) => {
    expect(cleanText(input)).toBe(output);
  });
});

describe('cuts by bytes', () => {
  test('never in the middle of a character', () => {
    expect(cutTextBytes('aé😀', 1)).toBe('a');
    expect(cutTextBytes('aé😀', 2)).toBe('a');
    expect(cutTextBytes('aé😀', 3)).toBe('aé');
    expect(cutTextBytes('aé😀', 6)).toBe('aé');
    expect(cutTextBytes('aé😀', 7)).toBe('aé😀');
    expect(utf8Prefix(Buffer.from('😀')).subarray(0, 4).length).toBe(4);
    expect(utf8Prefix(Buffer.from('😀').subarray(0, 3)).length).toBe(0);
  });
});

describe('secret scrubbing', () => {
  test('every string and key of a JSON value, __proto__ included, however deep', () => {
    const scrubber = new SecretScrubber(['s3cr3t-value']);
    const value = JSON.parse('{"__proto__": "s3cr3t-value", "s3cr3t-value": ["x s3cr3t-value y", 1, null, {"k": "s3cr3t-value"}]}') as unknown;
    expect(scrubber.deep(value)).toEqual(JSON.parse('{"__proto__": "***", "***": ["x *** y", 1, null, {"k": "***"}]}'));
    let deep: unknown = 's3cr3t-value';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let inner = scrubber.deep(deep);
    for (let i = 0; i < 100_000; i++) inner = (inner as unknown[])[0];
    expect(inner).toBe('***');
    expect(mapStrings({ a: ['b'] }, (text) => text.toUpperCase())).toEqual({ A: ['B'] });
  });
});

describe('reading stdout', () => {
  test('what counts as a result, as text, or as a broken result', () => {
    expect(parseTaskOutput('{"findings": "x"}')).toEqual({ kind: 'result', result: { findings: 'x' } });
    expect(parseTaskOutput('\u001b[32m{"findings": "green"}\u001b[0m\r\n')).toEqual({ kind: 'result', result: { findings: 'green' } });
    expect(parseTaskOutput('{"a":1}\nthen text')).toEqual({ kind: 'result', result: { status: 'completed', findings: '{"a":1}\nthen text' } });
    expect(parseTaskOutput('{"findings": ')).toMatchObject({ kind: 'error', errorClass: 'invalid-output' });
    expect(parseTaskOutput('{\n  "a": 1,\n}')).toMatchObject({ kind: 'error', errorClass: 'invalid-output' });
    // Braces that do not open an object with keys are text.
    expect(parseTaskOutput('{curly} text')).toEqual({ kind: 'result', result: { status: 'completed', findings: '{curly} text' } });
    expect(parseTaskOutput('{not json')).toEqual({ kind: 'result', result: { status: 'completed', findings: '{not json' } });
    expect(parseTaskOutput('text\n{"a": }')).toMatchObject({ kind: 'error', errorClass: 'invalid-output' });
    expect(parseTaskOutput('text\n{placeholder}')).toEqual({ kind: 'result', result: { status: 'completed', findings: 'text\n{placeholder}' } });
  });
});

describe('finishAttempt', () => {
  const task = () => ({ id: 'T', session: mkdtempSync(join(tmpdir(), 'csv-wave-finish-')), row: { id: 'T', role: 'r' } });

  test('an error outcome is cleaned, scrubbed and cut to its beginning and end', () => {
    process.env['HOSTILE_UNIT_TOKEN'] = 'tok-0123456789';
    try {
      const reply = finishAttempt(task(), { kind: 'error', errorClass: 'task-failure', error: `\u001b[31mfailed\u001b[0m tok-0123456789 ${'x'.repeat(10_000)} the end` });
      expect(reply.kind).toBe('error');
      if (reply.kind !== 'error') return;
      expect(reply.error.startsWith('failed *** x')).toBe(true);
      expect(reply.error.endsWith('x the end')).toBe(true);
      expect(reply.error).toMatch(/ \[…\d+ characters cut…\] /);
      expect(reply.error.length).toBeLessThanOrEqual(4100);
    } finally {
      delete process.env['HOSTILE_UNIT_TOKEN'];
    }
  });

  test('gc_signal and severity_summary longer than 500 characters are cut, with a note', () => {
    const reply = finishAttempt(task(), { kind: 'result', result: { findings: 'f', gc_signal: 'G'.repeat(600), severity_summary: 'S'.repeat(501) } });
    expect(reply).toMatchObject({ kind: 'finished', gc_signal: `${'G'.repeat(499)}…`, severity_summary: `${'S'.repeat(499)}…` });
    if (reply.kind !== 'finished') return;
    expect(reply.notes).toEqual([
      'severity_summary cut: the first 499 of 501 characters kept',
      'gc_signal cut: the first 499 of 600 characters kept',
    ]);
    expect(reply.findings).toBe(`f\n[${reply.notes![0]}]\n[${reply.notes![1]}]`);
  });
});
