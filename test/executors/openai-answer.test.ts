import { describe, expect, test } from 'vitest';
import { quoteAnswer, readAnswer, type Answer } from '../../src/executors/openai/answer.js';

const kValid = '{"status":"completed","findings":"Three ideas"}';

function problem(answer: Answer): string {
  expect(answer.ok).toBe(false);
  if (answer.ok) throw new Error('unreachable');
  return answer.problem;
}

function result(answer: Answer) {
  expect(answer.ok).toBe(true);
  if (!answer.ok) throw new Error(`unexpected problem: ${answer.problem}`);
  return answer.result;
}

describe('readAnswer: code fences', () => {
  test.each([
    ['a fence with a language tag', '```json\n' + kValid + '\n```'],
    ['a fence without a tag', '```\n' + kValid + '\n```'],
    ['a fence around blank lines and spaces', '  \n```JSON  \n\n' + kValid + '\n\n```\n  '],
    ['the closing fence on the JSON line', '```json\n' + kValid + '```'],
  ])('%s is taken off', (_name, content) => {
    expect(result(readAnswer(content, 'stop')).findings).toBe('Three ideas');
  });

  test('a fence with prose around it is not an answer: only a whole-answer fence is taken off', () => {
    expect(problem(readAnswer('Here it is:\n```json\n' + kValid + '\n```', 'stop'))).toMatch(/^the answer is not valid JSON \(/);
  });

  test('JSON that is not in a fence is read as it is', () => {
    expect(result(readAnswer(`  ${kValid}\n`, 'stop')).status).toBe('completed');
  });
});

describe('readAnswer: not JSON, not an object', () => {
  test('an empty answer, and one that is only a fence', () => {
    expect(problem(readAnswer('  \n ', 'stop'))).toBe('the answer was empty');
    expect(problem(readAnswer('```json\n\n```', 'stop'))).toBe('the answer was empty');
  });

  test('prose is not valid JSON, and the parser says where', () => {
    expect(problem(readAnswer('Sure! Here are my ideas.', 'stop'))).toMatch(/^the answer is not valid JSON \(.+\)$/);
  });

  test('an answer cut off at the token limit says so, for empty and broken answers only', () => {
    const cut = ' (the answer was cut off at the token limit: write less, and put long text in artifacts)';
    expect(problem(readAnswer('', 'length'))).toBe(`the answer was empty${cut}`);
    expect(problem(readAnswer('{"status":"comp', 'length'))).toMatch(/^the answer is not valid JSON \(.+\) \(the answer was cut off/);
    expect(problem(readAnswer('[1]', 'length'))).toBe('the answer is JSON but not an object');
  });

  test.each([['[]'], ['[{"status":"completed"}]'], ['42'], ['"completed"'], ['null'], ['true']])('%s is JSON but not an object', (content) => {
    expect(problem(readAnswer(content, 'stop'))).toBe('the answer is JSON but not an object');
  });
});

describe('readAnswer: the result schema', () => {
  test('a bad field is named with its path', () => {
    expect(problem(readAnswer('{"status":"done"}', 'stop'))).toMatch(/^the answer does not match the result schema \(status: [^;]+\)$/);
    expect(problem(readAnswer('{"artifacts":[{"name":"../escape","content":"x"}]}', 'stop'))).toMatch(/\(artifacts\.0\.name: /);
  });

  test('every bad field is listed, separated by semicolons', () => {
    const text = problem(readAnswer('{"status":"done","findings":7,"key_findings":"one"}', 'stop'));
    expect(text).toMatch(/status: /);
    expect(text).toMatch(/findings: /);
    expect(text).toMatch(/key_findings: /);
    expect(text.split('; ')).toHaveLength(3);
  });

  test('an unknown field is reported against the whole result', () => {
    expect(problem(readAnswer('{"status":"completed","summary":"x"}', 'stop'))).toMatch(/\(result: .*summary/);
  });

  test('a valid answer comes back parsed, with the schema defaults filled in', () => {
    expect(result(readAnswer('{}', 'stop'))).toEqual({ status: 'completed', findings: '' });
  });

  test('a role rule is not applied here: a challenger answer without counts is still a valid result', () => {
    expect(result(readAnswer('{"status":"completed","findings":"ok"}', 'stop')).severity_summary).toBeUndefined();
  });
});

describe('quoteAnswer', () => {
  test('quotes a short answer whole, a long one up to 200 characters, an empty one not at all', () => {
    expect(quoteAnswer('  not json  ')).toBe('; the answer began: not json');
    expect(quoteAnswer(`${'a'.repeat(200)}b`)).toBe(`; the answer began: ${'a'.repeat(200)}…`);
    expect(quoteAnswer('a'.repeat(200))).toBe(`; the answer began: ${'a'.repeat(200)}`);
    expect(quoteAnswer(' \n ')).toBe('');
  });
});
