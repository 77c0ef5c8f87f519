import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answerSchema } from '../../src/executors/openai/contract-schema.js';
import { sessionCommands } from '../../src/backend/local/child-groups.js';
import { codexBinary, codexHome, removeTempDirs, tempDir } from '../helpers/agent-servers/agent-cli.js';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap } from '../helpers/agent-servers/common.js';
import { startResponsesServer, type ResponsesReply, type ResponsesServer } from '../helpers/agent-servers/responses-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { usageLinesOf } from '../helpers/usage-lines.js';
import { roleResult } from '../helpers/fake-openai-server.js';
import { runCli as runCsvWave } from '../helpers/cli.js';

/**
 * `csv-wave run --executor codex` end to end: the built CLI runs the real codex binary of the
 * devDependency per attempt, against a scripted Responses-API server on loopback, with a
 * private CODEX_HOME that names no provider: --base-url brings csv-wave's own.
 */

const kKey = 'sk-codex-run-test-0123456789abcdef';
let server: ResponsesServer;
let trap: ProxyTrap;

beforeEach(async () => {
  trap = await startProxyTrap();
});
afterEach(async () => {
  await server?.close();
  await trap.close();
  removeTempDirs();
});

async function run(dir: string, script: ResponsesReply[] | ((index: number) => ResponsesReply), ...extra: string[]) {
  return (await start(dir, script, ...extra)).exited;
}

async function start(dir: string, script: ResponsesReply[] | ((index: number) => ResponsesReply), ...extra: string[]): Promise<SpawnedCli> {
  server = await startResponsesServer(typeof script === 'function' ? (_request, index) => script(index) : script);
  return spawnCliWith({ env: cliEnv({ OPENAI_API_KEY: kKey }) }, 'run', dir, ...codexFlags(), ...extra);
}

/** The flags that name the executor, the scripted model and the scripted server. */
function codexFlags(): string[] {
  return ['--executor', 'codex', '--model', 'scripted-model', '--base-url', server.baseUrl];
}

/**
 * The CLI's environment: the real codex first on PATH, a private CODEX_HOME (and HOME) that
 * names no provider, the proxy trap, no OPENAI_BASE_URL; and `extra` (the key, or none).
 */
function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const home = codexHome();
  return {
    ...proxyTrapEnv(trap),
    PATH: `${dirname(codexBinary())}:${process.env.PATH ?? ''}`,
    HOME: home,
    CODEX_HOME: home,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
    ...extra,
  };
}

/** Every file under the folder, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

const answer = (findings: string) => JSON.stringify({ status: 'completed', findings, key_findings: [findings] });

describe('csv-wave run --executor codex', () => {
  it('runs each task through codex exec: the answer is the result, the usage is in usage.ndjson, the contract goes as text.format, the key stays out of the session', async () => {
    const dir = buildSession([
      { id: 'A', title: 'First', description: 'Write the first part', role: 'writer' },
      { id: 'B', title: 'Second', description: 'Write the second part', role: 'writer', deps: 'A', context_from: 'A' },
    ]);
    const exited = await run(dir, (index) => ({
      kind: 'text',
      text: answer(index === 0 ? 'first part written' : 'second part written'),
      usage: { input_tokens: 1000 + index, cached_input_tokens: 100, output_tokens: 50, reasoning_output_tokens: 10 },
    }));
    expect(exited.code, exited.stderr).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'completed', findings: 'first part written' });
    expect(rows.get('B')).toMatchObject({ status: 'completed', findings: 'second part written' });

    const bodies = server.responseBodies();
    expect(bodies).toHaveLength(2);
    expect(bodies[0]!.model).toBe('scripted-model');
    expect(bodies[0]!.text?.format?.schema).toEqual(answerSchema('generic', 'writer'));
    const prompts = bodies.map((body) => JSON.stringify(body.input));
    expect(prompts[0]).toContain('You are one worker in a csv-wave pipeline');
    expect(prompts[0]).toContain('Write the first part');
    // B's prompt shows what A found.
    expect(prompts[1]).toContain('first part written');
    const posts = server.requests.filter((request) => request.method === 'POST');
    for (const request of posts) expect(request.headers.authorization).toBe(`Bearer ${kKey}`);

    const lines = usageLinesOf(dir).sort((a, b) => a.task.localeCompare(b.task));
    expect(lines.map((line) => [line.task, line.kind, line.prompt_tokens, line.completion_tokens, line.cached_tokens, line.reasoning_tokens, line.reported, line.model])).toEqual([
      ['A', 'agent', 1000, 50, 100, 10, true, 'scripted-model'],
      ['B', 'agent', 1001, 50, 100, 10, true, 'scripted-model'],
    ]);
    // Each line names the codex thread of its attempt, a different one for each task.
    const threads = lines.map((line) => line.agent_session);
    for (const thread of threads) expect(thread).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(threads).size).toBe(2);
    expect(allText(dir)).not.toContain(kKey);
    expect(trap.connections).toEqual([]);
  });

  it('runs a brainstorm session end to end: init --executor codex records it, every model task goes through codex, discoveries, usage and report.html are filled in', async () => {
    server = await startResponsesServer((request) => {
      const prompt = JSON.stringify(request.body);
      const role = /Role: *([A-Za-z-]+)/.exec(prompt)?.[1] ?? '';
      const id = /Task: *([A-Z0-9-]+)/.exec(prompt)?.[1] ?? '';
      return { kind: 'text', text: JSON.stringify(roleResult(role, id)), usage: { input_tokens: 500, cached_input_tokens: 0, output_tokens: 80 } };
    });
    const dir = join(tempDir('codex-brainstorm'), 'session');
    const init = await runCsvWave('init', dir, '--template', 'brainstorm', '--topic', 'Quieter open-plan offices', '--executor', 'codex', '--model', 'm', '--base-url', server.baseUrl);
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toMatchObject({ executor: { type: 'codex', model: 'm', base_url: server.baseUrl } });
    const exited = await spawnCliWith(
      { env: cliEnv({ OPENAI_API_KEY: kKey }) },
      'run',
      dir,
      '--price-input',
      '1',
      '--price-output',
      '2',
    ).exited;
    expect(exited.code, exited.stderr).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('GC-CHECK-002')!.findings).toMatch(/^GC decision: CONVERGED \(round limit 2 reached/);
    expect(rows.get('EVAL-001')).toMatchObject({ status: 'completed', findings: 'HA gateway ranks first (6.6): pursue.' });
    const called = ['IDEA-001', 'IDEA-002', 'CHALLENGE-001', 'IDEA-003', 'CHALLENGE-002', 'SYNTH-001', 'EVAL-001'];
    const lines = usageLinesOf(dir);
    expect(lines.map((line) => line.task).sort()).toEqual([...called].sort());
    for (const line of lines) expect(line).toMatchObject({ prompt_tokens: 500, completion_tokens: 80, reported: true, cost_usd: (500 * 1 + 80 * 2) / 1e6 });
    expect(readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')).toContain('"evaluation"');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('EVAL-001');
    expect(allText(dir)).not.toContain(kKey);
    expect(trap.connections).toEqual([]);
  });

  it("counts codex's tokens against --max-tokens-total: no task starts once they are spent", async () => {
    const dir = buildSession([
      { id: 'A', description: 'Write it', role: 'writer' },
      { id: 'B', description: 'Then this', role: 'writer', deps: 'A' },
    ]);
    const exited = await run(dir, () => ({ kind: 'text', text: answer('done'), usage: { input_tokens: 1000, output_tokens: 50 } }), '--max-tokens-total', '1000');
    expect(exited.code).toBe(1);
    expect(readRows(dir).get('A')!.status).toBe('completed');
    expect(readRows(dir).get('B')!.status).toBe('pending');
    expect(server.responseBodies()).toHaveLength(1);
  });

  it('fails an answer that breaks the contract, and its repair too, as invalid-output, saying what was wrong', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const prose = { kind: 'text', text: 'Here is my prose answer.' } as const;
    const exited = await run(dir, [prose, prose], '--retries', '0');
    expect(exited.code).not.toBe(0);
    const row = readRows(dir).get('A')!;
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/Invalid agent answer after one repair turn: the answer is not valid JSON/);
    expect(row.error).toContain('Here is my prose answer.');
    // A usage line per turn all the same: the tokens were spent.
    expect(usageLinesOf(dir)).toHaveLength(2);
  });

  it("fails a failed turn with codex's own message, classed by it (a 400 fails the task)", async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const exited = await run(dir, [{ kind: 'http-error', status: 400, body: { error: { message: 'model not supported here', type: 'invalid_request_error' } } }], '--retries', '2');
    expect(exited.code).not.toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^codex exited with code 1: .*model not supported here/) });
    expect(server.responseBodies()).toHaveLength(1);
  });

  it('kills codex and what it started at --timeout: no process of the session is left', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const exited = await run(dir, [{ kind: 'hang' }], '--retries', '0', '--timeout', '5');
    expect(exited.code).not.toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^Timed out after 5s/) });
    expect(sessionCommands(dir)).toEqual([]);
    // The thread had started: its tokens are unknown, not zero.
    expect(usageLinesOf(dir)).toMatchObject([{ task: 'A', reported: false }]);
  });

  it('Ctrl-C kills codex with what it started and puts its task back to pending; resume runs it, and clears the scratch folder the stop left', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const cli = await start(dir, [{ kind: 'hang' }, { kind: 'text', text: answer('done after resume') }], '--grace', '0.5');
    await server.waitForRequests(1);
    expect(sessionCommands(dir).length).toBeGreaterThan(0);
    cli.child.kill('SIGINT');
    const exited = await cli.exited;
    expect(exited.code, exited.stderr).toBe(130);
    expect(readRows(dir).get('A')!.status).toBe('pending');
    await waitFor(() => sessionCommands(dir).length === 0, 'codex to be gone');

    const resumed = await spawnCliWith({ env: cliEnv() }, 'resume', dir, ...codexFlags()).exited;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done after resume' });
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`csv-wave-codex-${cli.child.pid}-`))).toEqual([]);
  });

  it("takes the executor from session.json's executor block, its sandbox included", async () => {
    server = await startResponsesServer([{ kind: 'text', text: answer('done') }]);
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }], {
      session: { pipeline: 'generic', executor: { type: 'codex', model: 'from-session', base_url: server.baseUrl, sandbox: 'workspace-write' } },
    });
    const exited = await spawnCliWith({ env: cliEnv() }, 'run', dir).exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done' });
    const [body] = server.responseBodies();
    expect(body!.model).toBe('from-session');
    // codex tells the model its sandbox; no key was set, so none was sent.
    expect(JSON.stringify(body!.input)).toContain('workspace-write');
    expect(server.requests.find((request) => request.method === 'POST')?.headers.authorization).toBeUndefined();
    expect(trap.connections).toEqual([]);
  });

  it('stops before any task, with exit 2, when codex is too old, or --model is missing', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const bin = tempDir('old-codex');
    writeFileSync(join(bin, 'codex'), '#!/bin/sh\necho "codex-cli 0.98.2"\n', { mode: 0o755 });
    const old = await spawnCliWith({ env: { PATH: `${bin}:${process.env.PATH ?? ''}` } }, 'run', dir, '--executor', 'codex', '--model', 'm').exited;
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('is 0.98.2, older than 0.171.0, the oldest csv-wave runs');
    const noModel = await spawnCliWith({}, 'run', dir, '--executor', 'codex').exited;
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--executor codex needs --model NAME');
    expect(readRows(dir).get('A')!.status).toBe('');
  });

  it('stops before any task, with exit 2, when codex is not on PATH', async () => {
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    server = await startResponsesServer([]);
    const empty = tempDir('empty-path');
    const cli = spawnCliWith(
      { env: { PATH: empty } },
      'run',
      dir,
      '--executor',
      'codex',
      '--model',
      'm',
    );
    // node itself is started by its full path; the CLI finds no codex on this PATH.
    const exited = await cli.exited;
    expect(exited.code).toBe(2);
    expect(exited.stderr).toContain('the Codex CLI (codex) is not on PATH');
    expect(readRows(dir).get('A')!.status).toBe('');
  });
});
