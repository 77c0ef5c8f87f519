import { describe, expect, it } from 'vitest';
import { CodexStreamReader } from '../../src/executors/agents/codex/stream.js';

const kEvents = [
  { type: 'thread.started', thread_id: 'th-1' },
  { type: 'item.completed', item: { id: 'item_0', type: 'error', message: 'Model metadata for `m` not found.' } },
  { type: 'turn.started' },
  { type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'first' } },
  { type: 'item.completed', item: { id: 'item_2', type: 'command_execution', command: 'ls' } },
  { type: 'item.completed', item: { id: 'item_3', type: 'agent_message', text: '{"status":"completed"}' } },
  { type: 'turn.completed', usage: { input_tokens: 120, cached_input_tokens: 20, cache_write_input_tokens: 0, output_tokens: 30, reasoning_output_tokens: 5 } },
];

describe('CodexStreamReader', () => {
  it('keeps the thread id, the last agent message and the turn usage; warning items are not failures', () => {
    const reader = new CodexStreamReader();
    reader.push(kEvents.map((event) => JSON.stringify(event)).join('\n') + '\n');
    expect(reader.end()).toEqual({
      threadId: 'th-1',
      lastMessage: '{"status":"completed"}',
      usage: { input_tokens: 120, cached_input_tokens: 20, output_tokens: 30, reasoning_output_tokens: 5 },
    });
  });

  it('reads lines split across chunks, and a last line without its newline', () => {
    const text = kEvents.map((event) => JSON.stringify(event)).join('\n');
    const reader = new CodexStreamReader();
    for (let index = 0; index < text.length; index += 7) reader.push(text.slice(index, index + 7));
    const state = reader.end();
    expect(state.threadId).toBe('th-1');
    expect(state.usage?.output_tokens).toBe(30);
  });

  it("takes turn.failed's message for the failure, else the last error event's", () => {
    const failed = new CodexStreamReader();
    failed.push('{"type":"error","message":"retrying"}\n{"type":"turn.failed","error":{"message":"429 Too Many Requests"}}\n');
    expect(failed.end().failure).toBe('429 Too Many Requests');
    const errorOnly = new CodexStreamReader();
    errorOnly.push('{"type":"error","message":"boom"}\n');
    expect(errorOnly.end().failure).toBe('boom');
  });

  it('skips lines that are not JSON objects and counts that are not whole numbers', () => {
    const reader = new CodexStreamReader();
    reader.push('WARNING: something\n[1,2]\n{"type":"turn.completed","usage":{"input_tokens":-3,"output_tokens":"9"}}\n');
    expect(reader.end()).toEqual({ usage: { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 } });
  });
});
