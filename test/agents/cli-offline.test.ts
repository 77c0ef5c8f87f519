import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap } from '../helpers/agent-servers/common.js';
import { startMessagesServer, structuredAnswer, type MessagesServer } from '../helpers/agent-servers/messages-server.js';
import { startResponsesServer, type ResponsesReply, type ResponsesServer } from '../helpers/agent-servers/responses-server.js';
import {
  claudeBinary,
  claudeEnv,
  claudeHome,
  codexBinary,
  codexEnv,
  codexHome,
  jsonLines,
  kCodexKeyEnv,
  removeTempDirs,
  runCli,
  tempDir,
  type CliRun,
} from '../helpers/agent-servers/agent-cli.js';

/**
 * The facts csv-wave's agent executors rely on, checked against the real CLIs of the
 * devDependencies (@openai/codex, @anthropic-ai/claude-code), offline: each talks to a
 * scripted loopback server, and a proxy trap catches anything meant for elsewhere.
 */

const kSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['completed', 'failed'] }, findings: { type: 'string' } },
  required: ['status', 'findings'],
  additionalProperties: false,
};
const kAnswer = { status: 'completed', findings: 'the answer' };

let trap: ProxyTrap;
beforeEach(async () => {
  trap = await startProxyTrap();
});
afterEach(async () => {
  await trap.close();
  removeTempDirs();
});

/** The text of a Responses request's user messages (the prompt codex was given comes last). */
function userTexts(body: { input?: Array<{ role?: string; content?: Array<{ text?: string }> }> } | undefined): string[] {
  return (body?.input ?? []).filter((item) => item.role === 'user').flatMap((item) => (item.content ?? []).map((part) => part.text ?? ''));
}

describe('codex exec against a Responses-API server', () => {
  let server: ResponsesServer;
  let dir: string;
  let schemaFile: string;
  let lastFile: string;

  async function start(script: ResponsesReply[]): Promise<void> {
    server = await startResponsesServer(script);
    dir = tempDir('codex-work');
    schemaFile = join(dir, 'schema.json');
    lastFile = join(dir, 'last-message.txt');
    writeFileSync(schemaFile, JSON.stringify(kSchema));
  }
  afterEach(async () => {
    await server?.close();
  });

  /** `codex exec` as csv-wave runs it: read-only, ephemeral, the prompt on stdin. */
  function exec(home: string, prompt: string, extra: { args?: string[]; ephemeral?: boolean } = {}): Promise<CliRun> {
    const args = [
      'exec',
      '--json',
      '--skip-git-repo-check',
      ...(extra.ephemeral === false ? [] : ['--ephemeral']),
      '-s',
      'read-only',
      '-C',
      dir,
      '--output-schema',
      schemaFile,
      '--output-last-message',
      lastFile,
      '-m',
      'scripted-model',
      ...(extra.args ?? []),
      '-',
    ];
    return runCli(codexBinary(), args, { env: codexEnv(home, proxyTrapEnv(trap)), cwd: dir, input: prompt });
  }

  it('answers with the JSONL events, the last message file and the usage the server reported; the schema goes as text.format', async () => {
    await start([{ kind: 'text', text: JSON.stringify(kAnswer), usage: { input_tokens: 1234, cached_input_tokens: 200, output_tokens: 56, reasoning_output_tokens: 7 } }]);
    const run = await exec(codexHome(server.baseUrl), 'Do the task and answer as JSON');
    expect(run.code, run.stderr).toBe(0);
    const events = jsonLines(run.stdout);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('thread.started');
    expect(typeof events[0]!.thread_id).toBe('string');
    expect(types).toContain('turn.started');
    const messages = events.filter((event) => event.type === 'item.completed' && (event.item as { type?: string }).type === 'agent_message');
    expect(messages.map((event) => (event.item as { text?: string }).text)).toEqual([JSON.stringify(kAnswer)]);
    const completed = events.find((event) => event.type === 'turn.completed');
    expect(completed?.usage).toMatchObject({ input_tokens: 1234, cached_input_tokens: 200, output_tokens: 56, reasoning_output_tokens: 7 });
    expect(readFileSync(lastFile, 'utf8')).toBe(JSON.stringify(kAnswer));

    const [body] = server.responseBodies();
    expect(body?.model).toBe('scripted-model');
    expect(body?.stream).toBe(true);
    expect(body?.text?.format).toMatchObject({ type: 'json_schema', schema: kSchema });
    // Codex asks for strict mode: a server that honours it wants every property required.
    expect(body?.text?.format?.strict).toBe(true);
    expect(userTexts(body).at(-1)).toContain('Do the task and answer as JSON');
    // The key goes as the bearer token, from the env variable the provider names.
    expect(server.requests.find((request) => request.method === 'POST')?.headers.authorization).toMatch(/^Bearer sk-test-codex-/);
    expect(trap.connections).toEqual([]);
  });

  it('takes its provider from -c flags over a config without one (what --base-url passes)', async () => {
    await start([{ kind: 'text', text: JSON.stringify(kAnswer) }]);
    const run = await exec(codexHome(), 'prompt', {
      args: [
        '-c',
        'model_provider="csvwave"',
        '-c',
        'model_providers.csvwave.name="csv-wave"',
        '-c',
        `model_providers.csvwave.base_url="${server.baseUrl}"`,
        '-c',
        'model_providers.csvwave.wire_api="responses"',
        '-c',
        `model_providers.csvwave.env_key="${kCodexKeyEnv}"`,
        '-c',
        'model_providers.csvwave.request_max_retries=0',
        '-c',
        'model_providers.csvwave.stream_max_retries=0',
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(lastFile, 'utf8')).toBe(JSON.stringify(kAnswer));
    expect(server.responseBodies()).toHaveLength(1);
    expect(trap.connections).toEqual([]);
  });

  it('does not hold the answer to --output-schema: prose comes back with exit 0 (csv-wave must check it)', async () => {
    await start([{ kind: 'text', text: 'not JSON at all' }]);
    const run = await exec(codexHome(server.baseUrl), 'prompt');
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(lastFile, 'utf8')).toBe('not JSON at all');
  });

  it('exits 1 with error and turn.failed events on an HTTP error or a failed response', async () => {
    await start([
      { kind: 'http-error', status: 429, body: { error: { message: 'slow down', type: 'rate_limit_error' } }, headers: { 'retry-after': '1' } },
      { kind: 'http-error', status: 400, body: { error: { message: 'the request was bad', type: 'invalid_request_error' } } },
      { kind: 'failed', message: 'the model broke', code: 'server_error' },
    ]);
    const home = codexHome(server.baseUrl);
    const results: Array<{ code: number | null; error: string; failed: string }> = [];
    for (let index = 0; index < 3; index++) {
      const run = await exec(home, 'prompt');
      const events = jsonLines(run.stdout);
      results.push({
        code: run.code,
        error: String(events.find((event) => event.type === 'error')?.message ?? ''),
        failed: String((events.find((event) => event.type === 'turn.failed')?.error as { message?: string } | undefined)?.message ?? ''),
      });
    }
    expect(results.map((result) => result.code)).toEqual([1, 1, 1]);
    expect(results[0]!.failed).toContain('429');
    expect(results[1]!.failed).toContain('the request was bad');
    expect(results[2]!.failed).toContain('the model broke');
    for (const result of results) expect(result.error).toBe(result.failed);
    // No retries: request_max_retries = 0 and stream_max_retries = 0.
    expect(server.responseBodies()).toHaveLength(3);
  });

  it('continues a thread with `exec resume <thread id>` when the first run was not ephemeral; its usage is the thread total', async () => {
    await start([
      { kind: 'text', text: 'not JSON', usage: { input_tokens: 100, output_tokens: 10 } },
      { kind: 'text', text: JSON.stringify(kAnswer), usage: { input_tokens: 300, output_tokens: 7 } },
    ]);
    const home = codexHome(server.baseUrl);
    const first = await exec(home, 'first prompt', { ephemeral: false });
    expect(first.code, first.stderr).toBe(0);
    const thread = jsonLines(first.stdout).find((event) => event.type === 'thread.started')?.thread_id as string;
    const resumed = await runCli(
      codexBinary(),
      ['exec', 'resume', '--json', '--skip-git-repo-check', '--output-schema', schemaFile, '--output-last-message', lastFile, '-m', 'scripted-model', thread, '-'],
      { env: codexEnv(home, proxyTrapEnv(trap)), cwd: dir, input: 'the repair prompt' },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const events = jsonLines(resumed.stdout);
    expect(events.find((event) => event.type === 'thread.started')?.thread_id).toBe(thread);
    expect(events.find((event) => event.type === 'turn.completed')?.usage).toMatchObject({ input_tokens: 400, output_tokens: 17 });
    expect(readFileSync(lastFile, 'utf8')).toBe(JSON.stringify(kAnswer));
    const second = server.responseBodies()[1];
    expect(userTexts(second)).toEqual(expect.arrayContaining([expect.stringContaining('first prompt'), expect.stringContaining('the repair prompt')]));
    expect(JSON.stringify(second?.input)).toContain('not JSON');
    expect(trap.connections).toEqual([]);
  });

  it('cannot resume an ephemeral thread', async () => {
    await start([{ kind: 'text', text: 'x' }]);
    const home = codexHome(server.baseUrl);
    const first = await exec(home, 'first prompt');
    const thread = jsonLines(first.stdout).find((event) => event.type === 'thread.started')?.thread_id as string;
    const resumed = await runCli(codexBinary(), ['exec', 'resume', '--json', '--skip-git-repo-check', thread, '-'], {
      env: codexEnv(home, proxyTrapEnv(trap)),
      cwd: dir,
      input: 'again',
    });
    expect(resumed.code).toBe(1);
    expect(server.responseBodies()).toHaveLength(1);
  });
});

describe('claude -p against a Messages-API server', () => {
  let server: MessagesServer;
  let dir: string;
  let home: string;
  afterEach(async () => {
    await server?.close();
  });

  function claude(args: string[], prompt: string): Promise<CliRun> {
    return runCli(
      claudeBinary(),
      ['-p', '--output-format', 'json', '--json-schema', JSON.stringify(kSchema), '--model', 'scripted-model', '--tools', '', ...args],
      { env: claudeEnv(server.origin, proxyTrapEnv(trap), home), cwd: dir, input: prompt },
    );
  }

  function result(run: CliRun): Record<string, unknown> {
    return JSON.parse(run.stdout) as Record<string, unknown>;
  }

  beforeEach(() => {
    dir = tempDir('claude-work');
    home = claudeHome();
  });

  it('answers with structured_output from its StructuredOutput tool, with usage, cost and a session id; the schema is the tool input_schema', async () => {
    server = await startMessagesServer([structuredAnswer(kAnswer, { input_tokens: 1000, output_tokens: 50, cache_creation_input_tokens: 30, cache_read_input_tokens: 400 })]);
    const run = await claude(['--max-turns', '3', '--no-session-persistence'], 'Do the task');
    expect(run.code, run.stderr).toBe(0);
    const answer = result(run);
    expect(answer).toMatchObject({ type: 'result', subtype: 'success', is_error: false, structured_output: kAnswer });
    expect(answer.usage).toMatchObject({ input_tokens: 1000, output_tokens: 50, cache_creation_input_tokens: 30, cache_read_input_tokens: 400 });
    expect(typeof answer.session_id).toBe('string');
    expect(typeof answer.total_cost_usd).toBe('number');
    const bodies = server.messageBodies();
    // The turn ends on the tool call whose input fits the schema: one request.
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.model).toBe('scripted-model');
    // --tools "" leaves only the answer tool.
    expect(bodies[0]!.tools?.map((tool) => tool.name)).toEqual(['StructuredOutput']);
    expect(bodies[0]!.tools?.[0]?.input_schema).toMatchObject(kSchema);
    expect(JSON.stringify(bodies[0]!.messages)).toContain('Do the task');
    expect(server.requests.find((request) => request.method === 'POST')?.headers['x-api-key']).toMatch(/^sk-ant-test-/);
    expect(trap.connections).toEqual([]);
  });

  it('holds the tool input to the schema: a call that breaks it gets an error tool result and another turn', async () => {
    server = await startMessagesServer([structuredAnswer({ status: 'completed' }), structuredAnswer(kAnswer)]);
    const run = await claude(['--max-turns', '4', '--no-session-persistence'], 'Do the task');
    expect(run.code, run.stderr).toBe(0);
    expect(result(run).structured_output).toEqual(kAnswer);
    const second = server.messageBodies()[1];
    const last = second?.messages?.at(-1);
    expect(JSON.stringify(last)).toContain('"is_error":true');
    expect(JSON.stringify(last)).toContain('findings');
  });

  it('ends with error_max_turns and exit 1 at --max-turns', async () => {
    const bad = structuredAnswer({ status: 'completed' });
    server = await startMessagesServer([bad, bad, bad]);
    const run = await claude(['--max-turns', '2', '--no-session-persistence'], 'Do the task');
    expect(run.code).toBe(1);
    expect(result(run)).toMatchObject({ subtype: 'error_max_turns', is_error: true });
    expect(server.messageBodies()).toHaveLength(2);
  });

  it('exits 1 with is_error and the HTTP status on an API error', async () => {
    server = await startMessagesServer([
      { kind: 'http-error', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'the request was bad' } } },
      { kind: 'http-error', status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, headers: { 'retry-after': '1' } },
    ]);
    const bad = await claude(['--max-turns', '2', '--no-session-persistence'], 'x');
    const limited = await claude(['--max-turns', '2', '--no-session-persistence'], 'x');
    expect([bad.code, limited.code]).toEqual([1, 1]);
    expect(result(bad)).toMatchObject({ is_error: true, api_error_status: 400 });
    expect(String(result(bad).result)).toContain('the request was bad');
    expect(result(limited)).toMatchObject({ is_error: true, api_error_status: 429 });
    // CLAUDE_CODE_MAX_RETRIES=0: one request each.
    expect(server.messageBodies()).toHaveLength(2);
  });

  it('continues a session with --resume <session id> when the first run kept it', async () => {
    server = await startMessagesServer([
      structuredAnswer({ status: 'completed', findings: 'first' }),
      structuredAnswer(kAnswer, { input_tokens: 11, output_tokens: 5 }),
    ]);
    const first = await claude(['--max-turns', '3'], 'first prompt');
    expect(first.code, first.stderr).toBe(0);
    const session = result(first).session_id as string;
    const resumed = await claude(['--max-turns', '3', '--resume', session], 'the repair prompt');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(result(resumed)).toMatchObject({ session_id: session, structured_output: kAnswer });
    // The resumed run reports its own usage, not the session's total.
    expect(result(resumed).usage).toMatchObject({ input_tokens: 11, output_tokens: 5 });
    const text = JSON.stringify(server.messageBodies()[1]?.messages);
    expect(text).toContain('first prompt');
    expect(text).toContain('the repair prompt');
    expect(trap.connections).toEqual([]);
  });
});
