import { describe, expect, it } from 'vitest';
import { claudeArgs, kClaudeReadOnlyTools, kDefaultClaudeMaxTurns } from '../../src/executors/agents/claude/args.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failureClass, repairPrompt, resultFailure } from '../../src/executors/agents/claude/executor.js';
import { claudeLoginSeen } from '../../src/run/check-executor.js';
import { Budget } from '../../src/knowledge/budget.js';

const base = { model: 'claude-x', schema: '{"type":"object"}', persist: true };

describe('claudeArgs', () => {
  it('runs claude -p with JSON-line events, the contract, a turn limit, read-only tools that nothing else may join, the session kept for a repair', () => {
    expect(claudeArgs(base)).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--json-schema={"type":"object"}',
      '--model=claude-x',
      '--max-turns',
      String(kDefaultClaudeMaxTurns),
      '--permission-mode',
      'dontAsk',
      '--allowedTools=Read,Grep,Glob',
    ]);
    expect(kClaudeReadOnlyTools).toEqual(['Read', 'Grep', 'Glob']);
  });

  it('passes the model and the tools as one argument each, so a value that looks like a flag is not one', () => {
    const args = claudeArgs({ ...base, model: '--dangerously-skip-permissions', allowedTools: ['-x', 'Bash(git *)'] });
    expect(args).toContain('--model=--dangerously-skip-permissions');
    expect(args).not.toContain('--dangerously-skip-permissions');
    expect(args).toContain('--allowedTools=-x,Bash(git *)');
  });

  it('adds the turn limit, effort, budget, resume, no persistence and the extra arguments last', () => {
    const args = claudeArgs({ ...base, maxTurns: 3, effort: 'high', maxBudgetUsd: 0.0123456789, persist: false, resume: 'abc-123', extra: ['--permission-mode', 'acceptEdits'] });
    expect(args.slice(6)).toEqual([
      '--max-turns',
      '3',
      '--permission-mode',
      'dontAsk',
      '--allowedTools=Read,Grep,Glob',
      '--effort=high',
      '--max-budget-usd',
      '0.012346',
      '--resume=abc-123',
      '--no-session-persistence',
      '--permission-mode',
      'acceptEdits',
    ]);
  });

  it('writes a budget as a plain decimal, never an exponent, never 0 or below', () => {
    const budget = (usd: number) => claudeArgs({ ...base, maxBudgetUsd: usd }).at(-1);
    expect(budget(2)).toBe('2');
    expect(budget(1e-7)).toBe('0.000001');
    expect(budget(0)).toBe('0.000001');
    expect(budget(-1)).toBe('0.000001');
  });
});

describe('resultFailure', () => {
  const result = (fields: Partial<Parameters<typeof resultFailure>[0]>) => ({ subtype: 'success', isError: true, ...fields });

  it('names the turn limit, as task-failure', () => {
    expect(resultFailure(result({ subtype: 'error_max_turns' }), 7, undefined)).toMatchObject({
      errorClass: 'task-failure',
      error: expect.stringContaining('--max-turns 7, error_max_turns'),
    });
  });

  it('names the budget, as task-failure', () => {
    expect(resultFailure(result({ subtype: 'error_max_budget_usd' }), 7, 0.5)).toMatchObject({ errorClass: 'task-failure', error: expect.stringContaining('--max-budget-usd 0.5') });
  });

  it('takes a schema claude could not get answered for invalid output', () => {
    expect(resultFailure(result({ subtype: 'error_max_structured_output_retries' }), 7, undefined).errorClass).toBe('invalid-output');
  });

  it('classes an API error by its status: 429 rate-limited, 5xx and 529 transient, other 4xx task-failure', () => {
    const classOf = (status: number) => resultFailure(result({ apiErrorStatus: status, text: 'API Error' }), 7, undefined).errorClass;
    expect([classOf(429), classOf(500), classOf(529), classOf(408), classOf(400), classOf(401)]).toEqual(['rate-limited', 'transient', 'transient', 'transient', 'task-failure', 'task-failure']);
  });

  it('says how to log in when claude is not', () => {
    expect(resultFailure(result({ text: 'Not logged in · Please run /login' }), 7, undefined)).toMatchObject({
      errorClass: 'task-failure',
      error: expect.stringContaining('set ANTHROPIC_API_KEY'),
    });
  });

  it('classes an error without a status by its message', () => {
    expect(failureClass('API Error: Overloaded')).toBe('transient');
    expect(failureClass('rate limit reached')).toBe('rate-limited');
    expect(failureClass('Connection error.')).toBe('transient');
    expect(failureClass('the model broke')).toBe('task-failure');
  });
});

describe('repairPrompt', () => {
  it('names what was wrong and the task, in the openai repair wording', () => {
    expect(repairPrompt('T-1', '"findings" is missing')).toMatch(/^Your answer could not be used: "findings" is missing\. Answer again with only the corrected JSON object for task T-1/);
  });
});

describe('claudeLoginSeen (checkClaude, offline)', () => {
  it('sees a key or token in the environment, a cloud provider, or a login file of the config folder; nothing else', () => {
    const home = mkdtempSync(join(tmpdir(), 'csv-wave-claude-login-'));
    try {
      const config = join(home, '.claude');
      mkdirSync(config);
      const env = { HOME: home, CLAUDE_CONFIG_DIR: config };
      expect(claudeLoginSeen(env)).toBe(false);
      expect(claudeLoginSeen({ ...env, ANTHROPIC_API_KEY: ' ' })).toBe(false);
      for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CODE_USE_BEDROCK']) expect(claudeLoginSeen({ ...env, [name]: 'x' })).toBe(true);
      writeFileSync(join(config, 'settings.json'), '{"theme":"dark"}');
      expect(claudeLoginSeen(env)).toBe(false);
      writeFileSync(join(config, 'settings.json'), '{"apiKeyHelper":"/bin/key"}');
      expect(claudeLoginSeen(env)).toBe(true);
      rmSync(join(config, 'settings.json'));
      writeFileSync(join(config, '.credentials.json'), '{}');
      expect(claudeLoginSeen(env)).toBe(true);
      // ~/.claude when CLAUDE_CONFIG_DIR is not set.
      expect(claudeLoginSeen({ HOME: home })).toBe(true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('Budget.leftUsd (what a claude attempt gets as --max-budget-usd)', () => {
  it('is what is left of --max-cost, never below 0; undefined without --max-cost', () => {
    const budget = new Budget({ maxCostUsd: 1 }, { prompt_tokens: 0, completion_tokens: 0, cost_usd: 0.25 });
    expect(budget.leftUsd()).toBe(0.75);
    budget.add([{ ts: '', task: 'A', attempt: 1, request: 1, kind: 'agent', model: 'm', prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, reported: true, cost_usd: 2 }]);
    expect(budget.leftUsd()).toBe(0);
    expect(new Budget({ maxTokensTotal: 5 }, undefined).leftUsd()).toBeUndefined();
  });
});
