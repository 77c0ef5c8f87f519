import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { UsageWriter } from '../../src/session/usage-writer.js';
import type { RequestUsage, UsageLine } from '../../src/knowledge/usage.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

const request = (n: number): RequestUsage => ({
  request: n,
  kind: n === 1 ? 'first' : 'repair',
  model: 'm',
  prompt_tokens: 100,
  completion_tokens: 10,
  cached_tokens: 0,
  reported: true,
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-usage-writer-'));
  const counted: UsageLine[] = [];
  const writer = new UsageWriter({ files: new SessionWriter(dir), warn: () => {}, onUsage: (lines) => counted.push(...lines) });
  const written = () => {
    const path = join(dir, 'usage.ndjson');
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((text) => {
        const line = JSON.parse(text) as UsageLine;
        return `${line.task} ${line.attempt}/${line.request}`;
      });
  };
  return { writer, written, counted };
}

describe('UsageWriter: each request once, whether its live report or its reply comes first', () => {
  test('live reports first: the reply writes only the requests no report told', () => {
    const { writer, written, counted } = setup();
    writer.live('T', 1, request(1));
    expect(written()).toEqual(['T 1/1']);
    writer.reply('T', 1, [request(1), request(2)]);
    expect(written()).toEqual(['T 1/1', 'T 1/2']);
    expect(counted.map((line) => line.request)).toEqual([1, 2]);
  });

  test('the reply first: a live report that comes after it is dropped, one of a later attempt is written', () => {
    const { writer, written, counted } = setup();
    writer.reply('T', 1, [request(1), request(2)]);
    writer.live('T', 1, request(2));
    writer.live('T', 1, request(1));
    expect(written()).toEqual(['T 1/1', 'T 1/2']);
    writer.live('T', 2, request(1));
    writer.live('T', 2, request(1));
    writer.reply('T', 2, [request(1)]);
    expect(written()).toEqual(['T 1/1', 'T 1/2', 'T 2/1']);
    expect(counted).toHaveLength(3);
  });

  test('an attempt whose reply never comes (cancelled) keeps the lines of its live reports; other tasks are apart', () => {
    const { writer, written } = setup();
    writer.live('A', 1, request(1));
    writer.reply('B', 1, [request(1)]);
    writer.live('B', 1, request(1));
    expect(written()).toEqual(['A 1/1', 'B 1/1']);
  });
});
