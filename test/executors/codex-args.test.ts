import { describe, expect, it } from 'vitest';
import { codexExecArgs, kCodexKeyEnv } from '../../src/executors/agents/codex/args.js';
import { failureClass } from '../../src/executors/agents/codex/executor.js';

const base = { model: 'gpt-x', sandbox: 'read-only' as const, workdir: '/s', schemaFile: '/t/schema.json', lastMessageFile: '/t/last.txt', hasKey: true };

describe('codexExecArgs', () => {
  it('runs codex exec non-interactively: JSONL events, no session file, the sandbox, the folder, the contract and the last message, the prompt on stdin', () => {
    expect(codexExecArgs(base)).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--ephemeral',
      '-s',
      'read-only',
      '-C',
      '/s',
      '--output-schema',
      '/t/schema.json',
      '--output-last-message',
      '/t/last.txt',
      '--model=gpt-x',
      '-',
    ]);
  });

  it('passes the model as one argument, so a name that looks like a flag is not one', () => {
    const args = codexExecArgs({ ...base, model: '--dangerously-bypass-approvals-and-sandbox' });
    expect(args).toContain('--model=--dangerously-bypass-approvals-and-sandbox');
    expect(args).not.toContain('--dangerously-bypass-approvals-and-sandbox');
  });

  it('with a base URL, defines a provider of its own that speaks the Responses API there and retries nothing', () => {
    const args = codexExecArgs({ ...base, sandbox: 'workspace-write', baseUrl: 'http://127.0.0.1:8080/v1' });
    expect(args.slice(4, 6)).toEqual(['-s', 'workspace-write']);
    const settings = args.flatMap((arg, index) => (args[index - 1] === '-c' ? [arg] : []));
    expect(settings).toEqual([
      'model_provider="csvwave"',
      'model_providers.csvwave.name="csv-wave"',
      'model_providers.csvwave.base_url="http://127.0.0.1:8080/v1"',
      'model_providers.csvwave.wire_api="responses"',
      `model_providers.csvwave.env_key="${kCodexKeyEnv}"`,
      'model_providers.csvwave.request_max_retries=0',
      'model_providers.csvwave.stream_max_retries=0',
    ]);
    expect(args.at(-1)).toBe('-');
  });

  it('names no key variable when none is set (a local server needs none), and quotes the URL as a TOML string', () => {
    const args = codexExecArgs({ ...base, hasKey: false, baseUrl: 'http://127.0.0.1:1/v1?a="b"' });
    expect(args.some((arg) => arg.includes('env_key'))).toBe(false);
    expect(args).toContain('model_providers.csvwave.base_url="http://127.0.0.1:1/v1?a=\\"b\\""');
  });
});

describe('failureClass', () => {
  it('reads codex failure messages into error classes', () => {
    expect(failureClass('exceeded retry limit, last status: 429 Too Many Requests')).toBe('rate-limited');
    expect(failureClass('stream disconnected before completion: boom')).toBe('transient');
    expect(failureClass('unexpected status 503 Service Unavailable')).toBe('transient');
    expect(failureClass('{"error":{"message":"bad thing","type":"invalid_request_error"}}')).toBe('task-failure');
  });
});
