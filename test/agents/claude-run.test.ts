import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answerSchema } from '../../src/executors/openai/contract-schema.js';
import { sessionCommands } from '../../src/backend/local/child-groups.js';
import { claudeBinary, claudeHome, kClaudeTestKey, removeTempDirs, tempDir } from '../helpers/agent-servers/agent-cli.js';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap } from '../helpers/agent-servers/common.js';
import {
  kDefaultMessagesUsage,
  kOverloaded,
  rateLimited,
  startMessagesServer,
  structuredAnswer,
  userText,
  type MessagesReply,
  type MessagesRequest,
  type MessagesServer,
  type MessagesUsage,
} from '../helpers/agent-servers/messages-server.js';
import type { RecordedRequest } from '../helpers/agent-servers/common.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { usageLinesOf } from '../helpers/usage-lines.js';
import { roleResult } from '../helpers/fake-openai-server.js';
import { runCli as runCsvWave } from '../helpers/cli.js';

/**
 * `csv-wave run --executor claude` end to end: the built CLI runs the real claude binary of
 * the devDependency per attempt, against a scripted Messages-API server on loopback
 * (--base-url becomes ANTHROPIC_BASE_URL), with a private HOME and CLAUDE_CONFIG_DIR and a
 * proxy trap for anything meant for elsewhere.
 */

let server: MessagesServer;
let trap: ProxyTrap;

beforeEach(async () => {
  trap = await startProxyTrap();
});
afterEach(async () => {
  await server?.close();
  await trap.close();
  removeTempDirs();
});

/**
 * What claude 2.1.197 charges for a model it has no price of (the scripted model's name):
 * $5 and $25 per million input and output tokens, $0.50 cache reads, $6.25 cache writes.
 * Seen in its result's total_cost_usd; csv-wave records that figure, it prices nothing itself.
 */
function claudeCost(usage: MessagesUsage): number {
  return (usage.input_tokens * 5 + usage.output_tokens * 25 + (usage.cache_read_input_tokens ?? 0) * 0.5 + (usage.cache_creation_input_tokens ?? 0) * 6.25) / 1e6;
}

/**
 * The CLI's environment: the real claude first on PATH, a private HOME and config folder,
 * the key, no nonessential traffic, the proxy trap; CLAUDE_CODE_MAX_RETRIES unset (the
 * executor turns claude's own retries off).
 */
function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const home = claudeHome();
  return {
    ...proxyTrapEnv(trap),
    PATH: `${dirname(claudeBinary())}:${process.env.PATH ?? ''}`,
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_API_KEY: kClaudeTestKey,
    ANTHROPIC_AUTH_TOKEN: undefined,
    CLAUDE_CODE_OAUTH_TOKEN: undefined,
    ANTHROPIC_BASE_URL: undefined,
    CLAUDE_CODE_MAX_RETRIES: undefined,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ...extra,
  };
}

function claudeFlags(): string[] {
  return ['--executor', 'claude', '--model', 'scripted-model', '--base-url', server.origin];
}

async function start(dir: string, script: MessagesReply[] | ((request: RecordedRequest, index: number) => MessagesReply), ...extra: string[]): Promise<SpawnedCli> {
  server = await startMessagesServer(script);
  return spawnCliWith({ env: cliEnv() }, 'run', dir, ...claudeFlags(), ...extra);
}

/** Every file under the folder, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

const answer = (findings: string) => structuredAnswer({ status: 'completed', findings, key_findings: [findings] });

describe('csv-wave run --executor claude', () => {
  it('runs each task through claude -p: the StructuredOutput answer is the result, one usage line per invocation with its tokens and total_cost_usd, the key stays out of the session', async () => {
    const dir = buildSession([
      { id: 'A', title: 'First', description: 'Write the first part', role: 'writer' },
      { id: 'B', title: 'Second', description: 'Write the second part', role: 'writer', deps: 'A', context_from: 'A' },
    ]);
    const usages: MessagesUsage[] = [
      { input_tokens: 1000, output_tokens: 50, cache_read_input_tokens: 300, cache_creation_input_tokens: 20 },
      { input_tokens: 1500, output_tokens: 70, cache_read_input_tokens: 0, cache_creation_input_tokens: 40 },
    ];
    const cli = await start(dir, (_request, index) => structuredAnswer({ status: 'completed', findings: index === 0 ? 'first part written' : 'second part written' }, usages[index]));
    const exited = await cli.exited;
    expect(exited.code, exited.stderr).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'completed', findings: 'first part written' });
    expect(rows.get('B')).toMatchObject({ status: 'completed', findings: 'second part written' });

    const bodies = server.messageBodies();
    expect(bodies).toHaveLength(2);
    expect(bodies[0]!.model).toBe('scripted-model');
    // The contract is the schema of claude's answer tool; only the read-only tools are pre-approved.
    const tool = bodies[0]!.tools?.find((candidate) => candidate.name === 'StructuredOutput');
    expect(tool?.input_schema).toMatchObject(answerSchema('generic', 'writer'));
    expect(userText(bodies[0])).toContain('You are one worker in a csv-wave pipeline');
    expect(userText(bodies[0])).toContain('Write the first part');
    expect(userText(bodies[1])).toContain('first part written');
    for (const request of server.requests.filter((request) => request.method === 'POST')) expect(request.headers['x-api-key']).toBe(kClaudeTestKey);

    const lines = usageLinesOf(dir).sort((a, b) => a.task.localeCompare(b.task));
    expect(lines.map((line) => [line.task, line.request, line.kind, line.prompt_tokens, line.completion_tokens, line.cached_tokens, line.cache_creation_tokens, line.reported])).toEqual([
      ['A', 1, 'agent', 1000 + 300 + 20, 50, 300, 20, true],
      ['B', 1, 'agent', 1500 + 0 + 40, 70, 0, 40, true],
    ]);
    expect(lines[0]!.cost_usd).toBeCloseTo(claudeCost(usages[0]!), 10);
    expect(lines[1]!.cost_usd).toBeCloseTo(claudeCost(usages[1]!), 10);
    const sessions = lines.map((line) => line.agent_session);
    for (const session of sessions) expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(sessions).size).toBe(2);
    expect(allText(dir)).not.toContain(kClaudeTestKey);
    expect(trap.connections).toEqual([]);
  });

  it('runs a brainstorm session end to end: init --executor claude records it, every model task goes through claude, discoveries, usage with cost and report.html are filled in', async () => {
    server = await startMessagesServer((request) => {
      const text = userText(request.body as MessagesRequest);
      const role = /Role: *([A-Za-z-]+)/.exec(text)?.[1] ?? '';
      const id = /Task: *([A-Z0-9-]+)/.exec(text)?.[1] ?? '';
      return structuredAnswer(roleResult(role, id));
    });
    const dir = join(tempDir('claude-brainstorm'), 'session');
    const init = await runCsvWave('init', dir, '--template', 'brainstorm', '--topic', 'Quieter open-plan offices', '--executor', 'claude', '--model', 'm', '--base-url', server.origin);
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toMatchObject({ executor: { type: 'claude', model: 'm', base_url: server.origin } });
    const exited = await spawnCliWith({ env: cliEnv() }, 'run', dir).exited;
    expect(exited.code, exited.stderr).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('GC-CHECK-002')!.findings).toMatch(/^GC decision: CONVERGED \(round limit 2 reached/);
    expect(rows.get('EVAL-001')).toMatchObject({ status: 'completed', findings: 'HA gateway ranks first (6.6): pursue.' });
    const called = ['IDEA-001', 'IDEA-002', 'CHALLENGE-001', 'IDEA-003', 'CHALLENGE-002', 'SYNTH-001', 'EVAL-001'];
    const lines = usageLinesOf(dir);
    expect(lines.map((line) => line.task).sort()).toEqual([...called].sort());
    const { input_tokens, output_tokens, cache_read_input_tokens = 0, cache_creation_input_tokens = 0 } = kDefaultMessagesUsage;
    for (const line of lines) {
      expect(line).toMatchObject({ kind: 'agent', prompt_tokens: input_tokens + cache_read_input_tokens + cache_creation_input_tokens, completion_tokens: output_tokens, reported: true });
      expect(line.cost_usd).toBeCloseTo(claudeCost(kDefaultMessagesUsage), 10);
    }
    expect(readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')).toContain('"evaluation"');
    const report = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(report).toContain('EVAL-001');
    expect(allText(dir)).not.toContain(kClaudeTestKey);
    expect(trap.connections).toEqual([]);
  });

  it('repairs an answer that breaks the contract in the same session (--resume): the second request carries the conversation; two usage lines', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const exited = await (
      await start(dir, [
        structuredAnswer({ status: 'completed', findings: '   ' }, { input_tokens: 100, output_tokens: 10 }),
        structuredAnswer({ status: 'completed', findings: 'repaired' }, { input_tokens: 300, output_tokens: 20 }),
      ])
    ).exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'repaired' });
    const bodies = server.messageBodies();
    expect(bodies).toHaveLength(2);
    const second = JSON.stringify(bodies[1]!.messages);
    expect(second).toContain('Write it');
    expect(second).toContain('Your answer could not be used: \\"findings\\" is missing or empty');
    const lines = usageLinesOf(dir);
    expect(lines.map((line) => [line.request, line.kind, line.prompt_tokens, line.completion_tokens])).toEqual([
      [1, 'agent', 100, 10],
      [2, 'agent', 300, 20],
    ]);
    expect(lines[1]!.agent_session).toBe(lines[0]!.agent_session);
  });

  it('fails as invalid-output when the repaired answer breaks the contract again', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const bad = structuredAnswer({ status: 'completed', findings: '  ' });
    const exited = await (await start(dir, [bad, bad], '--retries', '2')).exited;
    expect(exited.code).toBe(1);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Invalid agent answer after one repair turn: "findings" is missing or empty/) });
    // invalid-output is not retried.
    expect(server.messageBodies()).toHaveLength(2);
  });

  it('passes what is left of --max-cost as --max-budget-usd, and halts once it is spent', async () => {
    const dir = buildSession([
      { id: 'A', description: 'First', role: 'writer' },
      { id: 'B', description: 'Second', role: 'writer' },
      { id: 'C', description: 'Third', role: 'writer' },
    ]);
    const cost = claudeCost(kDefaultMessagesUsage);
    // A fits; B gets less than one answer costs (claude stops it); C never starts.
    const maxCost = cost * 1.5;
    const exited = await (await start(dir, () => answer('done'), '--concurrency', '1', '--max-cost', String(maxCost))).exited;
    expect(exited.code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'completed' });
    expect(rows.get('B')).toMatchObject({ status: 'failed', error: expect.stringContaining('claude stopped at its budget (--max-budget-usd 0.00104') });
    expect(rows.get('C')!.status).toBe('pending');
    expect(exited.stdout + exited.stderr).toContain('the budget of --max-cost');
    expect(usageLinesOf(dir).map((line) => line.task)).toEqual(['A', 'B']);
  });

  it('maps a 429 to rate-limited and an overload to transient (both retried), a turn limit to task-failure naming it (not retried)', async () => {
    const dir = buildSession([
      { id: 'A', description: 'Task A here', role: 'writer' },
      { id: 'B', description: 'Task B here', role: 'writer' },
      { id: 'C', description: 'Task C here', role: 'writer' },
    ], { session: { pipeline: 'generic', executor: { type: 'claude', model: 'scripted-model', max_turns: 2, effort: 'low' } } });
    const seen = new Map<string, number>();
    server = await startMessagesServer((request) => {
      const task = /Task ([ABC]) here/.exec(userText(request.body as MessagesRequest))?.[1] ?? '?';
      const count = (seen.get(task) ?? 0) + 1;
      seen.set(task, count);
      if (task === 'A') return count === 1 ? rateLimited(0) : answer('A done');
      if (task === 'B') return count === 1 ? kOverloaded : answer('B done');
      return { kind: 'tool', name: 'Read', input: { file_path: 'tasks.csv' } };
    });
    const exited = await spawnCliWith({ env: cliEnv({ ANTHROPIC_BASE_URL: server.origin }) }, 'run', dir, '--concurrency', '1', '--retries', '1', '--retry-delay', '0').exited;
    expect(exited.code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'completed', findings: 'A done' });
    expect(rows.get('B')).toMatchObject({ status: 'completed', findings: 'B done' });
    expect(rows.get('C')).toMatchObject({ status: 'failed', error: expect.stringContaining('claude stopped at its turn limit (--max-turns 2, error_max_turns)') });
    expect(Object.fromEntries(seen)).toEqual({ A: 2, B: 2, C: 2 });
    // session.json's effort reaches the API as claude sends it.
    for (const body of server.messageBodies()) expect(body.output_config).toEqual({ effort: 'low' });
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8');
    expect(attempts).toMatch(/"task":"A".*"error_class":"rate-limited"/);
    expect(attempts).toMatch(/"task":"B".*"error_class":"transient"/);
    expect(attempts).toMatch(/"task":"C".*"error_class":"task-failure"/);
    expect(trap.connections).toEqual([]);
  });

  it('sandbox workspace-write: claude edits files of its working folder, and of no other (a write elsewhere, by a path that climbs out, is refused)', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write the notes', role: 'writer' }], {
      session: { pipeline: 'generic', executor: { type: 'claude', model: 'scripted-model', sandbox: 'workspace-write' } },
    });
    const elsewhere = tempDir('elsewhere');
    const outside = [join(elsewhere, 'outside.txt'), join(dir, '..', `${basename(dir)}-sibling.txt`)];
    server = await startMessagesServer([
      ...outside.map((file_path): MessagesReply => ({ kind: 'tool', name: 'Write', input: { file_path, content: 'written outside' } })),
      { kind: 'tool', name: 'Write', input: { file_path: join(dir, 'notes.txt'), content: 'written inside' } },
      answer('notes written'),
    ]);
    const exited = await spawnCliWith({ env: cliEnv({ ANTHROPIC_BASE_URL: server.origin }) }, 'run', dir).exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'notes written' });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('written inside');
    for (const file of outside) expect(existsSync(file), file).toBe(false);
    // What claude told the model of each write, in the request after it.
    const results = server.messageBodies().slice(1, 4).map((body) => JSON.stringify(body.messages?.at(-1)));
    expect(results[0]).toMatch(/Permission to use Write has been denied/);
    expect(results[1]).toMatch(/Permission to use Write has been denied/);
    expect(results[2]).toMatch(/File created successfully/);
  });

  it('kills claude and what it started at --timeout: no process of the session is left, an unreported usage line', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const exited = await (await start(dir, [{ kind: 'hang' }], '--retries', '0', '--timeout', '5')).exited;
    expect(exited.code).toBe(1);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Timed out after 5s; claude/) });
    expect(sessionCommands(dir)).toEqual([]);
    expect(usageLinesOf(dir)).toMatchObject([{ task: 'A', kind: 'agent', reported: false }]);
  });

  it('Ctrl-C kills claude with what it started and puts its task back to pending; resume runs it', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const cli = await start(dir, [{ kind: 'hang' }, answer('done after resume')], '--grace', '0.5');
    await server.waitForRequests(1);
    expect(sessionCommands(dir).length).toBeGreaterThan(0);
    cli.child.kill('SIGINT');
    const exited = await cli.exited;
    expect(exited.code, exited.stderr).toBe(130);
    expect(readRows(dir).get('A')!.status).toBe('pending');
    await waitFor(() => sessionCommands(dir).length === 0, 'claude to be gone');
    const resumed = await spawnCliWith({ env: cliEnv() }, 'resume', dir, ...claudeFlags()).exited;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done after resume' });
  });

  it('stops before any task, with exit 2, when claude is missing, too old or not logged in', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    server = await startMessagesServer([]);
    const empty = tempDir('empty-path');
    const missing = await spawnCliWith({ env: cliEnv({ PATH: empty }) }, 'run', dir, ...claudeFlags()).exited;
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Claude Code (claude) is not on PATH; install it with npm install -g @anthropic-ai/claude-code');

    const bin = tempDir('old-claude');
    writeFileSync(join(bin, 'claude'), '#!/bin/sh\necho "2.0.5 (Claude Code)"\n', { mode: 0o755 });
    const old = await spawnCliWith({ env: cliEnv({ PATH: `${bin}:${process.env.PATH ?? ''}` }) }, 'run', dir, ...claudeFlags()).exited;
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('is 2.0.5, older than 2.1.197, the oldest csv-wave runs');

    const loggedOut = await spawnCliWith({ env: cliEnv({ ANTHROPIC_API_KEY: undefined }) }, 'run', dir, ...claudeFlags()).exited;
    expect(loggedOut.code).toBe(2);
    expect(loggedOut.stderr).toContain('Claude Code is not logged in');

    const noModel = await spawnCliWith({ env: cliEnv() }, 'run', dir, '--executor', 'claude').exited;
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--executor claude needs --model NAME');
    expect(readRows(dir).get('A')!.status).toBe('');
    expect(server.requests).toEqual([]);
  });
});
