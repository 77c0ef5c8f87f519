import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexBinary, codexHome, removeTempDirs } from '../helpers/agent-servers/agent-cli.js';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap } from '../helpers/agent-servers/common.js';
import { startResponsesServer, type ResponsesReply, type ResponsesRequest, type ResponsesServer } from '../helpers/agent-servers/responses-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith } from '../helpers/spawn-cli.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

/**
 * Agent settings per role and per row, and the repair turn, end to end: the built CLI runs the
 * real codex of the devDependency against a scripted Responses-API server on loopback, which
 * records the model and the reasoning effort each request asked for.
 */

let server: ResponsesServer | undefined;
let trap: ProxyTrap;

beforeEach(async () => {
  trap = await startProxyTrap();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await trap.close();
  removeTempDirs();
});

/** The CLI's environment: the real codex first on PATH, a private CODEX_HOME (and HOME), the proxy trap, no key. */
function cliEnv(home = codexHome()): Record<string, string | undefined> {
  return {
    ...proxyTrapEnv(trap),
    PATH: `${dirname(codexBinary())}:${process.env.PATH ?? ''}`,
    HOME: home,
    CODEX_HOME: home,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
  };
}

const answer = (findings: string) => JSON.stringify({ status: 'completed', findings, key_findings: [findings] });

/** The task a request is for, from its prompt (`Task: <id>`). */
function taskOf(body: ResponsesRequest): string {
  return /Task: *([A-Za-z0-9-]+)/.exec(JSON.stringify(body.input))?.[1] ?? '?';
}

/** A server that answers every task with its id, and what each task's request asked for. */
async function answeringServer(): Promise<ResponsesServer> {
  return startResponsesServer((request) => ({ kind: 'text', text: answer(`done ${taskOf(request.body as ResponsesRequest)}`) }));
}

/** Per task: the model and the reasoning effort its request asked for, and the reasoning summary (that `args` set). */
function asked(responses: ResponsesServer): Record<string, { model: string | undefined; effort: unknown; summary: unknown }> {
  const byTask: Record<string, { model: string | undefined; effort: unknown; summary: unknown }> = {};
  for (const body of responses.responseBodies()) {
    const reasoning = body.reasoning as { effort?: unknown; summary?: unknown } | undefined;
    byTask[taskOf(body)] = { model: body.model, effort: reasoning?.effort, summary: reasoning?.summary };
  }
  return byTask;
}

describe('agent settings per role and per row', () => {
  const rows = [
    { id: 'A', description: 'Write it', role: 'writer' },
    { id: 'B', description: 'Review it', role: 'reviewer' },
    { id: 'C', description: 'Write it again', role: 'writer', model: 'row-model', effort: 'medium' },
    { id: 'D', description: 'Review it again', role: 'reviewer', effort: 'minimal' },
  ];
  const roles = { reviewer: { model: 'role-model', effort: 'high', args: ['-c', 'model_reasoning_summary="none"'] } };

  it("session.json's roles win over its executor block, a row's model and effort cells over both", async () => {
    server = await answeringServer();
    const dir = buildSession(rows, {
      session: { pipeline: 'generic', executor: { type: 'codex', model: 'run-model', effort: 'low', base_url: server.baseUrl }, roles },
    });
    const exited = await spawnCliWith({ env: cliEnv() }, 'run', dir).exited;
    expect(exited.code, exited.stderr).toBe(0);
    for (const id of ['A', 'B', 'C', 'D']) expect(readRows(dir).get(id)).toMatchObject({ status: 'completed', findings: `done ${id}` });
    expect(asked(server)).toEqual({
      A: { model: 'run-model', effort: 'low', summary: 'auto' },
      // The role's args reach codex: its reasoning summary is off.
      B: { model: 'role-model', effort: 'high', summary: undefined },
      C: { model: 'row-model', effort: 'medium', summary: 'auto' },
      D: { model: 'role-model', effort: 'minimal', summary: undefined },
    });
    // Each usage line names the model its task ran with (prices go by it).
    const models = Object.fromEntries(usageLinesOf(dir).map((line) => [line.task, line.model]));
    expect(models).toEqual({ A: 'run-model', B: 'role-model', C: 'row-model', D: 'role-model' });
    expect(trap.connections).toEqual([]);
  });

  it("applies session.json's roles when flags name the executor", async () => {
    server = await answeringServer();
    const dir = buildSession(rows, { session: { pipeline: 'generic', roles } });
    const exited = await spawnCliWith({ env: cliEnv() }, 'run', dir, '--executor', 'codex', '--model', 'flag-model', '--base-url', server.baseUrl).exited;
    expect(exited.code, exited.stderr).toBe(0);
    const byTask = asked(server);
    expect(Object.fromEntries(Object.entries(byTask).map(([id, { model, effort }]) => [id, [model, effort]]))).toEqual({
      A: ['flag-model', undefined],
      B: ['role-model', 'high'],
      C: ['row-model', 'medium'],
      D: ['role-model', 'minimal'],
    });
  });
});

describe('the repair turn', () => {
  const prose = 'Here is my prose answer.';

  it('gives an answer that breaks the contract one repair in the same codex thread: the conversation so far and what was wrong go with it; its usage is a second line', async () => {
    const script: ResponsesReply[] = [
      { kind: 'text', text: prose, usage: { input_tokens: 120, cached_input_tokens: 20, output_tokens: 30, reasoning_output_tokens: 5 } },
      { kind: 'text', text: answer('repaired'), usage: { input_tokens: 1000, cached_input_tokens: 7, output_tokens: 3, reasoning_output_tokens: 1 } },
    ];
    server = await startResponsesServer(script);
    const home = codexHome();
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const exited = await spawnCliWith({ env: cliEnv(home) }, 'run', dir, '--executor', 'codex', '--model', 'm', '--base-url', server.baseUrl, '--retries', '0').exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'repaired' });

    const [first, second] = server.responseBodies();
    expect(server.responseBodies()).toHaveLength(2);
    const said = (body: ResponsesRequest) => (body.input ?? []).map((item) => `${item.role}: ${(item.content ?? []).map((part) => part.text ?? '').join('')}`);
    const firstSaid = said(first!);
    const secondSaid = said(second!);
    // The repair request carries the whole first turn, then the bad answer, then the repair.
    expect(secondSaid.slice(0, firstSaid.length)).toEqual(firstSaid);
    expect(secondSaid).toContain(`assistant: ${prose}`);
    expect(secondSaid.at(-1)).toMatch(/^user: Your answer could not be used: the answer is not valid JSON.*Answer again with only the corrected JSON object for task A/);
    // Same contract and model for the repair.
    expect(second!.text?.format?.schema).toEqual(first!.text?.format?.schema);
    expect(second!.model).toBe('m');

    // codex counts a resumed thread as a whole (1,120 input tokens): the repair's line is its own turn.
    const lines = usageLinesOf(dir);
    expect(lines.map((line) => [line.request, line.kind, line.prompt_tokens, line.cached_tokens, line.completion_tokens, line.reasoning_tokens])).toEqual([
      [1, 'agent', 120, 20, 30, 5],
      [2, 'agent', 1000, 7, 3, 1],
    ]);
    expect(lines[0]!.agent_session).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines[1]!.agent_session).toBe(lines[0]!.agent_session);
    // The thread is kept in the user's CODEX_HOME, as codex keeps sessions.
    expect(readdirSync(join(home, 'sessions'), { recursive: true, encoding: 'utf8' }).some((name) => name.endsWith(`${lines[0]!.agent_session}.jsonl`))).toBe(true);
  });

  it('fails as invalid-output, saying what was wrong, when the repair breaks the contract too; both turns are counted', async () => {
    server = await startResponsesServer([
      { kind: 'text', text: prose },
      { kind: 'text', text: JSON.stringify({ status: 'completed' }) },
    ]);
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }]);
    const exited = await spawnCliWith({ env: cliEnv() }, 'run', dir, '--executor', 'codex', '--model', 'm', '--base-url', server.baseUrl, '--retries', '0').exited;
    expect(exited.code).toBe(1);
    const row = readRows(dir).get('A')!;
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/^Invalid agent answer after one repair turn: /);
    expect(row.error).toContain('findings');
    expect(server.responseBodies()).toHaveLength(2);
    expect(usageLinesOf(dir).map((line) => line.request)).toEqual([1, 2]);
  });
});

describe('agent settings refused before any task (exit 2, file:line)', () => {
  it('refuses a bad agent cell, and an agent cell under a command run', async () => {
    const dir = buildSession([
      { id: 'A', description: 'Write it', role: 'writer' },
      { id: 'B', description: 'Then this', role: 'writer', agent: 'gpt' },
    ]);
    const bad = await spawnCliWith({ env: cliEnv() }, 'run', dir, '--executor', 'codex', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1').exited;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('tasks.csv:3: Invalid agent: gpt (codex or claude: the agent CLI that runs the row)');

    const commandDir = buildSession([{ id: 'A', description: 'Write it', role: 'writer', agent: 'codex' }]);
    const command = await spawnCliWith({ env: cliEnv() }, 'run', commandDir, '--cmd', 'echo done').exited;
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/tasks\.csv:2: agent codex: the agent column chooses the agent CLI of a row, and this run's executor is command; run it with --executor codex/);
    for (const folder of [dir, commandDir]) expect(readRows(folder).get('A')!.status).toBe('');
  });

  it("refuses a role entry no task has, and an unknown key in a role's entry, at their session.json lines", async () => {
    const roles = { writer: { model: 'w' }, writre: { model: 'x' } };
    const text = JSON.stringify({ pipeline: 'generic', executor: { type: 'codex', model: 'm', base_url: 'http://127.0.0.1:9/v1' }, roles }, null, 2);
    const dir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }], { session: text });
    const line = (key: string) => text.split('\n').findIndex((entry) => entry.includes(`"${key}"`)) + 1;
    const typo = await spawnCliWith({ env: cliEnv() }, 'run', dir).exited;
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`session.json:${line('writre')}: roles.writre: no task has the role writre (did you mean writer?)`);

    const unknown = text.replace('"model": "w"', '"model": "w",\n      "sandbx": "workspace-write"');
    const unknownDir = buildSession([{ id: 'A', description: 'Write it', role: 'writer' }], { session: unknown });
    const refused = await spawnCliWith({ env: cliEnv() }, 'run', unknownDir).exited;
    expect(refused.code).toBe(2);
    const sandbxLine = unknown.split('\n').findIndex((entry) => entry.includes('"sandbx"')) + 1;
    expect(refused.stderr).toContain(`session.json:${sandbxLine}: Unknown key: roles.writer.sandbx (did you mean sandbox?)`);
  });
});
