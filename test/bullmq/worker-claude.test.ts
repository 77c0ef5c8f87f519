import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kWorkerMaxTurns } from '../../src/backend/bullmq/trust/job-admission.js';
import type { AgentSpec } from '../../src/executors/agents/settings.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import { claudeBinary, claudeHome, codexBinary, codexHome, removeTempDirs, tempDir } from '../helpers/agent-servers/agent-cli.js';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap, type RecordedRequest } from '../helpers/agent-servers/common.js';
import { startMessagesServer, structuredAnswer, userText, type MessagesReply, type MessagesRequest, type MessagesServer } from '../helpers/agent-servers/messages-server.js';
import { addByHand, handMadeRequest, jobData, jobOutcome, startRecordingServer, type RecordingServer } from '../helpers/bullmq-jobs.js';
import { jobIdSource, readyWorkerWith, redisForEachTest } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { dumpAll, filesUnder } from '../helpers/secret-scan.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith, waitFor } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

/**
 * `csv-wave worker --executors claude`: a worker on the real Redis runs the real claude binary
 * of the devDependency against a scripted Messages-API server on loopback, with a private
 * HOME and CLAUDE_CONFIG_DIR, no nonessential traffic, and a proxy trap for anything meant
 * for elsewhere. The key is only in the worker's environment, the signing secret in its
 * --secret-file; a job, signed or not, gets no more from the worker than its flags allow
 * (job-admission.ts agentRefusal).
 */

/** A key no file, job or Redis value could hold by chance. */
const kApiKey = 'sk-ant-claude-worker-DO-NOT-STORE-4e8b1c7d92a6';

let server: MessagesServer;
let trap: ProxyTrap;
let attacker: RecordingServer | undefined;

beforeEach(async () => {
  trap = await startProxyTrap();
});
afterEach(async () => {
  await server?.close();
  await attacker?.close();
  attacker = undefined;
  await trap.close();
  removeTempDirs();
});

/**
 * A worker's or coordinator's environment: the real claude (and codex) on PATH, a private
 * HOME and config folder with no login, no nonessential traffic, the proxy trap, and `extra`.
 */
function agentEnv(extra: Record<string, string | undefined> = {}): { env: Record<string, string | undefined> } {
  const home = claudeHome();
  return {
    env: {
      ...proxyTrapEnv(trap),
      PATH: `${dirname(claudeBinary())}:${dirname(codexBinary())}:${process.env.PATH ?? ''}`,
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      CODEX_HOME: codexHome(),
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_AUTH_TOKEN: undefined,
      CLAUDE_CODE_OAUTH_TOKEN: undefined,
      ANTHROPIC_BASE_URL: undefined,
      CLAUDE_CODE_MAX_RETRIES: undefined,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      ...extra,
    },
  };
}

/** The signing secret in a file of its own (mode 600), as a worker machine holds it: an agent's read tools can read it. */
function secretFile(): string {
  const path = join(tempDir('worker-secret'), 'csv-wave-secret');
  writeFileSync(path, `${kTestSecret}\n`);
  chmodSync(path, 0o600);
  return path;
}

/** A worker's environment: the key, the secret only in its file (`--secret-file`), never in the environment. */
function workerEnv(extra: Record<string, string | undefined> = {}): { env: Record<string, string | undefined> } {
  return agentEnv({ ANTHROPIC_API_KEY: kApiKey, CSV_WAVE_SECRET: undefined, ...extra });
}

const answer = (findings: string) => structuredAnswer({ status: 'completed', findings, key_findings: [findings] });

/** The text of the last tool result a request carries back to the model (what the tool gave claude). */
function lastToolResult(body: MessagesRequest | undefined): string | undefined {
  const last = body?.messages?.at(-1);
  if (last?.role !== 'user' || !Array.isArray(last.content)) return undefined;
  const result = (last.content as Array<{ type?: string; content?: unknown }>).find((block) => block.type === 'tool_result');
  return result === undefined ? undefined : typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
}

/** The folder claude works in, as its system prompt tells the model. */
function workingFolder(request: RecordedRequest): string {
  const folder = /Primary working directory: (.*?)\\n/.exec(JSON.stringify(request.body))?.[1];
  if (folder === undefined) throw new Error('no working directory in the request');
  return folder;
}

/** A claude request as a coordinator sends it: with the prompt context the executor needs. */
function claudeRequest(id: string, executor: AgentSpec, row: Record<string, string> = {}): AttemptRequest {
  const request = handMadeRequest(id, executor);
  return {
    ...request,
    task: { ...request.task, row: { ...request.task.row, ...row } },
    prompt: { pipeline: 'generic', topic: '', discoveries: '', upstream: '', wisdom: '' },
  };
}

describe.runIf(kRunRedisTests)('csv-wave worker --executors claude', () => {
  const each = redisForEachTest();

  it('a session run with --backend bullmq: the worker runs its claude tasks (the coordinator has no key), each usage line lands once with its cost, and the key and the secret file the agent read are in no reply, job, Redis value or session file', { timeout: 600_000 }, async () => {
    const secret = secretFile();
    const usage = (index: number) => ({ input_tokens: 1000 + index, output_tokens: 50, cache_read_input_tokens: 100, cache_creation_input_tokens: 10 });
    server = await startMessagesServer((request) => {
      const body = request.body as MessagesRequest;
      const task = /Write part ([A-D])/.exec(userText(body))?.[1] ?? '?';
      const index = 'ABCD'.indexOf(task);
      if (task !== 'A') return answer(`part ${task} written`) as MessagesReply;
      // An agent talked into reading the worker's secret file, which then hands it and the key it was sent with to its answer.
      const read = lastToolResult(body);
      if (read === undefined) return { kind: 'tool', name: 'Read', input: { file_path: secret }, usage: usage(index) };
      return { ...answer(`part A written; the file read ${read.split('\n', 1)[0]}; the key ${String(request.headers['x-api-key'])}`), usage: usage(index) } as MessagesReply;
    });
    const dir = buildSession(
      [
        ...['A', 'B', 'C'].map((id) => ({ id, description: `Write part ${id}`, role: 'writer' })),
        { id: 'D', description: 'Write part D from the others', role: 'writer', deps: 'A;B;C', context_from: 'A;B' },
      ],
      { sessionId: 'claude' },
    );
    const worker = await readyWorkerWith(workerEnv(), each.redis.url, '--session-id', 'claude', '--concurrency', '2', '--secret-file', secret,
      '--executors', 'claude', '--allow-base-url', server.origin);
    each.started.push(worker);
    expect(worker.stdoutSoFar()).toContain(`runs claude jobs signed with its secret; sends its ANTHROPIC_API_KEY only to ${server.origin}; claude jobs in the sandboxes read-only, without CLI arguments or tools of their own`);
    // The coordinator has claude on its PATH (checked, as codex is) but no key and no login: only the worker has one.
    const coordinator = spawnCliWith(agentEnv(), 'run', dir, '--executor', 'claude', '--model', 'scripted-model', '--base-url', server.origin,
      '--backend', 'bullmq', '--redis', each.redis.url);
    // Redis as it stands while the run goes, looked at again and again: the jobs are there only while they wait or run.
    const seen: Array<Map<string, Buffer>> = [];
    let running = true;
    const looking = (async () => {
      while (running) {
        seen.push(await dumpAll(each.redis.url));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const run = await coordinator.exited;
    running = false;
    await looking;
    expect(run.code, run.stderr).toBe(0);
    const rows = readRows(dir);
    for (const id of ['A', 'B', 'C', 'D']) expect(rows.get(id)?.status, id).toBe('completed');
    expect(worker.stdoutSoFar().match(new RegExp(`\\[JOB\\] ${jobIdSource('claude', /[A-D]/, 1)} completed`, 'g'))).toHaveLength(4);

    // The worker's key went to the scripted server alone; the agent read the secret file, and neither reached the reply.
    const posts = server.requests.filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(5);
    for (const request of posts) expect(request.headers['x-api-key']).toBe(kApiKey);
    expect(trap.connections).toEqual([]);
    expect(rows.get('A')?.findings).toMatch(/^part A written; the file read 1\s*\*\*\*; the key \*\*\*$/);

    // One usage line per claude invocation, each with its own session, its tokens and claude's cost, written on the coordinator.
    const lines = usageLinesOf(dir).sort((a, b) => a.task.localeCompare(b.task));
    expect(lines.map((line) => [line.task, line.request, line.kind, line.reported])).toEqual(['A', 'B', 'C', 'D'].map((task) => [task, 1, 'agent', true]));
    expect(new Set(lines.map((line) => line.agent_session)).size).toBe(4);
    for (const line of lines) expect(line.cost_usd, line.task).toBeGreaterThan(0);
    // A's one invocation made two requests (the read, then the answer): claude's result sums them.
    expect(lines[0]!.prompt_tokens).toBe(2 * (1000 + 100 + 10));
    expect(lines[0]!.completion_tokens).toBe(2 * 50);

    seen.push(await dumpAll(each.redis.url));
    // The scan saw the jobs' texts (their rows and prompts) and the replies, so it would have seen the key too.
    const values = seen.flatMap((dumps) => [...dumps.values()]);
    expect(values.some((dump) => dump.includes('Write part A') && dump.includes('"claude"'))).toBe(true);
    expect(values.some((dump) => dump.includes('part B written'))).toBe(true);
    for (const dumps of seen) for (const [key, dump] of dumps) expect(dump.includes(kApiKey) || dump.includes(kTestSecret), key).toBe(false);
    for (const file of filesUnder(dir)) expect(readFileSync(file).includes(kApiKey) || readFileSync(file).includes(kTestSecret), file).toBe(false);
    expect(worker.stdoutSoFar() + worker.stderrSoFar()).not.toContain(kApiKey);
    expect(run.stdout + run.stderr).not.toContain(kApiKey);
  });

  it('a signed job asking for the edit tools, tools, CLI arguments, more turns, a model server or an agent the worker did not allow is refused, never run; one within its flags runs', { timeout: 600_000 }, async () => {
    server = await startMessagesServer([answer('allowed job done')]);
    attacker = await startRecordingServer();
    const worker = await readyWorkerWith(workerEnv(), each.redis.url, '--session-id', 'forged', '--secret-file', secretFile(),
      '--executors', 'claude', '--allow-base-url', server.origin);
    each.started.push(worker);
    const queue = 'csv-wave-forged';
    const claude: AgentSpec = { type: 'claude', model: 'scripted-model', baseUrl: server.origin };
    const forged: Array<[string, AttemptRequest, RegExp]> = [
      ['SB', claudeRequest('SB', { ...claude, sandbox: 'workspace-write' }), /its agent settings ask for the sandbox workspace-write, which this worker does not allow \(--allow-sandbox; allowed: read-only\)/],
      ['TL', claudeRequest('TL', { ...claude, allowedTools: ['Bash'] }), /its agent settings add allowed_tools \(1\), which this worker does not run \(--allow-agent-args\)/],
      ['DS', claudeRequest('DS', { ...claude, args: ['--dangerously-skip-permissions'] }), /its agent settings add args \(1\), which this worker does not run \(--allow-agent-args\)/],
      ['PM', claudeRequest('PM', { ...claude, args: ['--permission-mode', 'bypassPermissions'] }), /its agent settings add args \(2\), which this worker does not run \(--allow-agent-args\)/],
      ['MC', claudeRequest('MC', { ...claude, args: ['--mcp-config', '{"mcpServers":{"x":{"command":"sh"}}}'] }), /its agent settings add args \(2\)/],
      ['MT', claudeRequest('MT', { ...claude, maxTurns: 500 }), new RegExp(`its agent settings ask for max_turns 500, more than the ${kWorkerMaxTurns} this worker allows \\(--allow-agent-args\\)`)],
      ['BU', claudeRequest('BU', { ...claude, baseUrl: attacker.baseUrl }), /its agent settings name the model server http:\/\/127\.0\.0\.1:\d+\/v1, not one this worker sends its key to \(--allow-base-url; allowed for claude: /],
      ['RO', claudeRequest('RO', { ...claude, roles: { worker: { allowedTools: ['Read', 'Write'] } } }), /the settings of its role worker add allowed_tools \(2\)/],
      ['AG', claudeRequest('AG', claude, { agent: 'codex', model: 'other' }), /its row's agent codex is not one this worker runs \(--executors claude\)/],
      ['BI', claudeRequest('BI', { ...claude, binary: '/bin/sh' } as AgentSpec), /its agent settings hold "binary", which this worker does not know/],
    ];
    for (const [id, request] of forged) await addByHand(each.redis.url, queue, `forged.${id}.a1`, jobData(request, queue, `forged.${id}.a1`, kTestSecret));
    // Last, within the worker's flags: it runs (concurrency 1 takes the jobs in order), so the refusals above were decided, not skipped.
    await addByHand(each.redis.url, queue, 'forged.OK.a1', jobData(claudeRequest('OK', claude), queue, 'forged.OK.a1', kTestSecret));
    await waitFor(() => worker.stdoutSoFar().includes('[JOB] forged.OK.a1 completed'), 'the allowed job to run');

    const log = worker.stdoutSoFar();
    for (const [id, , why] of forged) {
      expect(log, id).toMatch(new RegExp(`\\[JOB\\] forged\\.${id}\\.a1 refused: ${why.source}`));
      const outcome = await jobOutcome(each.redis.url, queue, `forged.${id}.a1`);
      expect(outcome.state, id).toBe('failed');
      expect(outcome.failedReason, id).toMatch(/^csv-wave: refused by worker [^:]+:\d+: /);
    }
    // claude ran once, for the allowed job: no refused job reached a model server, the attacker's least of all.
    expect(server.messageBodies()).toHaveLength(1);
    expect(attacker.requests).toEqual([]);
    expect(trap.connections).toEqual([]);
  });

  it('--allow-sandbox workspace-write: claude edits files of its job folder and of no other; --allow-agent-args lets a job add turns; the base URL is still held', { timeout: 600_000 }, async () => {
    const elsewhere = join(tempDir('elsewhere'), 'outside.txt');
    let folder = '';
    server = await startMessagesServer((request, index) => {
      if (index === 0) {
        folder = workingFolder(request);
        return { kind: 'tool', name: 'Write', input: { file_path: elsewhere, content: 'written outside' } };
      }
      if (index === 1) return { kind: 'tool', name: 'Write', input: { file_path: join(folder, 'notes.txt'), content: 'written inside' } };
      return answer('notes written');
    });
    const worker = await readyWorkerWith(workerEnv(), each.redis.url, '--session-id', 'wide', '--secret-file', secretFile(), '--executors', 'claude',
      '--allow-base-url', server.origin, '--allow-sandbox', 'workspace-write', '--allow-agent-args');
    each.started.push(worker);
    expect(worker.stdoutSoFar()).toContain('claude jobs in the sandboxes read-only, workspace-write, with CLI arguments or tools of their own');
    const queue = 'csv-wave-wide';
    const claude: AgentSpec = { type: 'claude', model: 'scripted-model', baseUrl: server.origin };
    // Still not a model server it allows.
    await addByHand(each.redis.url, queue, 'wide.BU.a1', jobData(claudeRequest('BU', { ...claude, baseUrl: 'http://127.0.0.1:1' }), queue, 'wide.BU.a1', kTestSecret));
    await addByHand(each.redis.url, queue, 'wide.SB.a1', jobData(claudeRequest('SB', { ...claude, sandbox: 'workspace-write', maxTurns: kWorkerMaxTurns + 10 }), queue, 'wide.SB.a1', kTestSecret));
    await waitFor(() => /\[JOB\] wide\.BU\.a1 refused: its agent settings name the model server http:\/\/127\.0\.0\.1:1, not one/.test(worker.stdoutSoFar()), 'the job naming another server to be refused');
    await waitFor(() => worker.stdoutSoFar().includes('[JOB] wide.SB.a1 completed'), 'the workspace-write job to run');

    // The job's own folder, inside the worker's private one; what claude told the model of each write.
    expect(folder).toMatch(/csv-wave-worker-\d+-/);
    const results = server.messageBodies().slice(1).map(lastToolResult);
    expect(results[0]).toMatch(/Permission to use Write has been denied/);
    expect(results[1]).toMatch(/File created successfully/);
    expect(existsSync(elsewhere)).toBe(false);
  });

  it('a worker offering claude checks it once when it starts: missing, or without a login, exit 2 saying what to do, before Redis is reached', { timeout: 120_000 }, async () => {
    const missing = await spawnCliWith({ env: { ...workerEnv().env, PATH: '/nonexistent' } }, 'worker', '--redis', 'redis://127.0.0.1:1', '--secret-file', secretFile(), '--executors', 'claude').exited;
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/csv-wave worker --executors claude: Claude Code \(claude\) is not on PATH; install it with npm install -g @anthropic-ai\/claude-code/);
    expect(missing.stderr).not.toMatch(/Redis|ECONNREFUSED/);
    const loggedOut = await spawnCliWith(workerEnv({ ANTHROPIC_API_KEY: undefined }), 'worker', '--redis', 'redis://127.0.0.1:1', '--secret-file', secretFile(), '--executors', 'codex,claude').exited;
    expect(loggedOut.code).toBe(2);
    expect(loggedOut.stderr).toMatch(/csv-wave worker --executors claude: Claude Code is not logged in \(no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN in the environment, and no login in .*\); set one of them, or run `claude` and log in with \/login/);
    expect(loggedOut.stderr).not.toMatch(/Redis|ECONNREFUSED/);
  });

  it('a worker offering codex alone refuses a claude job, and a codex job whose row switches to claude, naming --executors', { timeout: 300_000 }, async () => {
    const worker = await readyWorkerWith(workerEnv({ OPENAI_API_KEY: undefined }), each.redis.url, '--session-id', 'codexonly', '--secret-file', secretFile(), '--executors', 'codex');
    each.started.push(worker);
    expect(worker.stdoutSoFar()).toContain('runs codex jobs');
    expect(worker.stdoutSoFar()).not.toContain('ANTHROPIC_API_KEY');
    const queue = 'csv-wave-codexonly';
    await addByHand(each.redis.url, queue, 'codexonly.A.a1', jobData(claudeRequest('A', { type: 'claude', model: 'm' }), queue, 'codexonly.A.a1', kTestSecret));
    await addByHand(each.redis.url, queue, 'codexonly.B.a1', jobData(claudeRequest('B', { type: 'codex', model: 'm' }, { agent: 'claude', model: 'c' }), queue, 'codexonly.B.a1', kTestSecret));
    await waitFor(() => /\[JOB\] codexonly\.B\.a1 refused/.test(worker.stdoutSoFar()), 'the refusals');
    expect(worker.stdoutSoFar()).toMatch(/\[JOB\] codexonly\.A\.a1 refused: its executor claude is not one this worker runs \(--executors codex\)/);
    expect(worker.stdoutSoFar()).toMatch(/\[JOB\] codexonly\.B\.a1 refused: its row's agent claude is not one this worker runs \(--executors codex\)/);
  });
});
