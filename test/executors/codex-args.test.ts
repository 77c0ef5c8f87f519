import { describe, expect, it } from 'vitest';
import { codexArgsProblem, codexExecArgs, kCodexKeyEnv } from '../../src/executors/agents/codex/args.js';
import { failureClass } from '../../src/executors/agents/codex/executor.js';

const base = { model: 'gpt-x', sandbox: 'read-only' as const, workdir: '/s', schemaFile: '/t/schema.json', lastMessageFile: '/t/last.txt', hasKey: true };

describe('codexExecArgs', () => {
  it('runs codex exec non-interactively: JSONL events, the sandbox, the folder, the contract and the last message, the prompt on stdin; not ephemeral, so that a repair turn can resume the thread', () => {
    expect(codexExecArgs(base)).not.toContain('--ephemeral');
    expect(codexExecArgs(base)).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
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
    expect(args.slice(3, 5)).toEqual(['-s', 'workspace-write']);
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

describe('codexExecArgs with settings', () => {
  it('passes the effort as a TOML-quoted -c value, then the settings\' args after csv-wave\'s own and before the prompt', () => {
    const args = codexExecArgs({ ...base, baseUrl: 'http://127.0.0.1:1/v1', effort: 'high', extra: ['--add-dir', '/data', '-c', 'x="y"'] });
    const effort = args.indexOf('model_reasoning_effort="high"');
    expect(args[effort - 1]).toBe('-c');
    expect(args.slice(-5)).toEqual(['--add-dir', '/data', '-c', 'x="y"', '-']);
    // After the provider's settings: a user's -c may override them (codex takes the last).
    expect(args.indexOf('--add-dir')).toBeGreaterThan(args.indexOf('model_providers.csvwave.stream_max_retries=0'));
    expect(codexExecArgs({ ...base, effort: 'say "hi"' })).toContain('model_reasoning_effort="say \\"hi\\""');
  });

  it('makes the repair turn the same exec with `resume <thread id>` before the prompt (codex applies the exec flags before resume to the resumed thread)', () => {
    const first = codexExecArgs({ ...base, effort: 'low', extra: ['--add-dir', '/d'] });
    const repair = codexExecArgs({ ...base, effort: 'low', extra: ['--add-dir', '/d'], resume: 'thread-1' });
    expect(repair).toEqual([...first.slice(0, -1), 'resume', 'thread-1', '-']);
  });
});

describe('codexArgsProblem', () => {
  it('accepts args that csv-wave does not pass itself', () => {
    expect(codexArgsProblem([])).toBeUndefined();
    expect(codexArgsProblem(['--add-dir', '/data', '-c', 'model_verbosity="low"', '--enable', 'x', '-p', 'fast'])).toBeUndefined();
  });

  it.each([
    [['--json'], /`--json` is a flag csv-wave passes/],
    [['--ephemeral'], /`--ephemeral` is a flag csv-wave passes/],
    [['-s', 'danger-full-access'], /`-s` is a flag csv-wave passes to codex itself \(set "sandbox" instead\)/],
    [['--sandbox=danger-full-access'], /set "sandbox" instead/],
    [['-sdanger-full-access'], /set "sandbox" instead/],
    [['--model', 'x'], /set "model" instead/],
    [['-C', '/'], /csv-wave sets the folder/],
    [['-o', 'x'], /`-o` is a flag csv-wave passes/],
    [['--output-schema', 'x'], /csv-wave passes/],
    [['-'], /would end codex's options/],
    [['--'], /would end codex's options/],
    [['resume', '--last'], /subcommand/],
  ])('refuses %j', (args, message) => {
    expect(codexArgsProblem(args)).toMatch(message);
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
