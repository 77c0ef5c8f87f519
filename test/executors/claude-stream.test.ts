import { describe, expect, it } from 'vitest';
import { ClaudeStreamReader } from '../../src/executors/agents/claude/stream.js';

/** Events as claude 2.1.197 writes them with --output-format stream-json --verbose (trimmed). */
const kInit = { type: 'system', subtype: 'init', cwd: '/s', session_id: 'sess-1', tools: ['Read'], model: 'm', permissionMode: 'dontAsk' };
const kAssistant = (text: string) => ({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] }, session_id: 'sess-1' });
const kResult = {
  type: 'result',
  subtype: 'success',
  is_error: false,
  api_error_status: null,
  num_turns: 2,
  result: '{"status":"completed"}',
  session_id: 'sess-1',
  total_cost_usd: 0.00835,
  usage: { input_tokens: 800, cache_creation_input_tokens: 40, cache_read_input_tokens: 200, output_tokens: 160, server_tool_use: { web_search_requests: 0 } },
  structured_output: { status: 'completed', findings: 'x' },
};

function read(lines: unknown[], chunk = 7): ReturnType<ClaudeStreamReader['end']> {
  const text = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');
  const reader = new ClaudeStreamReader();
  for (let index = 0; index < text.length; index += chunk) reader.push(text.slice(index, index + chunk));
  return reader.end();
}

describe('ClaudeStreamReader', () => {
  it('reads the session, the last text and the result, a line split across chunks and the last line without its newline', () => {
    const stream = read([kInit, kAssistant('thinking'), 'not json', '', kAssistant('done'), kResult]);
    expect(stream.sessionId).toBe('sess-1');
    expect(stream.lastText).toBe('done');
    expect(stream.assistantMessages).toBe(2);
    expect(stream.result).toEqual({
      subtype: 'success',
      isError: false,
      text: '{"status":"completed"}',
      structuredOutput: { status: 'completed', findings: 'x' },
      usage: { input_tokens: 800, output_tokens: 160, cache_read_input_tokens: 200, cache_creation_input_tokens: 40 },
      costUsd: 0.00835,
      numTurns: 2,
    });
  });

  it('reads an API error: is_error, its status and message', () => {
    const stream = read([kInit, { ...kResult, is_error: true, api_error_status: 429, result: 'API Error: 429 slow down', structured_output: undefined }]);
    expect(stream.result).toMatchObject({ isError: true, apiErrorStatus: 429, text: 'API Error: 429 slow down' });
    expect(stream.result?.structuredOutput).toBeUndefined();
  });

  it("takes modelUsage's counts when usage is all zeros (a run claude stopped at its budget)", () => {
    const stopped = {
      ...kResult,
      subtype: 'error_max_budget_usd',
      is_error: true,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      modelUsage: { m: { inputTokens: 200, outputTokens: 40, cacheReadInputTokens: 50, cacheCreationInputTokens: 10, costUSD: 0.002 } },
    };
    expect(read([stopped]).result?.usage).toEqual({ input_tokens: 200, output_tokens: 40, cache_read_input_tokens: 50, cache_creation_input_tokens: 10 });
  });

  it('has no result when claude was stopped on its way; bad counts are zero; a negative cost is dropped', () => {
    expect(read([kInit, kAssistant('x')]).result).toBeUndefined();
    const odd = read([{ ...kResult, total_cost_usd: -1, usage: { input_tokens: -5, output_tokens: 1.5, cache_read_input_tokens: 'x', cache_creation_input_tokens: 3 } }]);
    expect(odd.result?.usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 3 });
    expect(odd.result?.costUsd).toBeUndefined();
  });
});
