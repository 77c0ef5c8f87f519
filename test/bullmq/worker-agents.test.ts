import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSpec } from '../../src/executors/agents/settings.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import { codexBinary, codexHome, removeTempDirs } from '../helpers/agent-servers/agent-cli.js';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap } from '../helpers/agent-servers/common.js';
import { startResponsesServer, type ResponsesServer } from '../helpers/agent-servers/responses-server.js';
import { addByHand, handMadeRequest, jobData, jobOutcome, startRecordingServer, type RecordingServer } from '../helpers/bullmq-jobs.js';
import { jobIdSource, readyWorkerWith, redisForEachTest } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { dumpAll, filesUnder } from '../helpers/secret-scan.js';
import { kTestSecret } from '../helpers/test-secret.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

/**
 * `csv-wave worker --executors codex`: workers on the real Redis run the real codex binary of
 * the devDependency against a scripted Responses-API server on loopback. The key is only in
 * the workers' environment; a job, signed or not, gets no more from a worker than its own
 * flags allow (job-admission.ts agentRefusal).
 */

/** A key no file, job or Redis value could hold by chance. */
const kApiKey = 'sk-codex-worker-DO-NOT-STORE-7c41e9a2b35d';

let server: ResponsesServer;
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

/** A worker's or coordinator's environment: the real codex on PATH, a private CODEX_HOME naming no provider, the proxy trap, and `extra`. */
function agentEnv(extra: Record<string, string | undefined> = {}): { env: Record<string, string | undefined> } {
  const home = codexHome();
  return {
    env: {
      ...proxyTrapEnv(trap),
      PATH: `${dirname(codexBinary())}:${process.env.PATH ?? ''}`,
      HOME: home,
      CODEX_HOME: home,
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      ...extra,
    },
  };
}

const answer = (findings: string) => JSON.stringify({ status: 'completed', findings, key_findings: [findings] });

/** A codex request as a coordinator sends it: with the prompt context the executor needs. */
function codexRequest(id: string, executor: AgentSpec, row: Record<string, string> = {}): AttemptRequest {
  const request = handMadeRequest(id, executor);
  return {
    ...request,
    task: { ...request.task, row: { ...request.task.row, ...row } },
    prompt: { pipeline: 'generic', topic: '', discoveries: '', upstream: '', wisdom: '' },
  };
}

describe.runIf(kRunRedisTests)('csv-wave worker --executors codex', () => {
  const each = redisForEachTest();

  it('a session run with --backend bullmq: two workers run its codex tasks, each usage line lands once, and no Redis value, job or session file holds the key', { timeout: 600_000 }, async () => {
    server = await startResponsesServer((_request, index) => ({
      kind: 'text',
      // One answer holds the workers' signing secret, as an agent that read the secret file would: no reply in Redis carries it.
      text: answer(index === 1 ? `part 1 written, and the secret is ${kTestSecret}` : `part ${index} written`),
      usage: { input_tokens: 1000 + index, cached_input_tokens: 100, output_tokens: 50, reasoning_output_tokens: 10 },
    }));
    const ids = ['A', 'B', 'C', 'D'];
    const dir = buildSession(
      [...ids.map((id) => ({ id, description: `Write part ${id}`, role: 'writer' })), { id: 'E', description: 'Sum up', role: 'writer', deps: 'A;B;C;D', context_from: 'A;B' }],
      { sessionId: 'agents' },
    );
    const workers: SpawnedCli[] = [];
    for (let index = 0; index < 2; index++) {
      const worker = await readyWorkerWith(agentEnv({ OPENAI_API_KEY: kApiKey }), each.redis.url, '--session-id', 'agents', '--executors', 'codex', '--allow-base-url', server.baseUrl);
      each.started.push(worker);
      workers.push(worker);
      expect(worker.stdoutSoFar()).toContain(`runs codex jobs signed with its secret; sends its OPENAI_API_KEY only to ${server.baseUrl}; codex jobs in the sandboxes read-only, without CLI arguments or tools of their own`);
    }
    // The coordinator has no key: only the workers do.
    const coordinator = spawnCliWith(agentEnv(), 'run', dir, '--executor', 'codex', '--model', 'scripted-model', '--base-url', server.baseUrl,
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
    for (const id of [...ids, 'E']) expect(rows.get(id)?.status, id).toBe('completed');
    expect(rows.get('E')?.findings).toMatch(/^part \d written/);

    // Both workers ran codex tasks, with the key, towards the scripted server alone.
    const ran = workers.map((worker) => worker.stdoutSoFar().match(new RegExp(`\\[JOB\\] ${jobIdSource('agents', /[A-E]/, 1)} completed`, 'g'))?.length ?? 0);
    expect(ran[0]! + ran[1]!).toBe(5);
    expect(ran.every((count) => count > 0), `jobs per worker: ${ran.join(', ')}`).toBe(true);
    const posts = server.requests.filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(5);
    for (const request of posts) expect(request.headers.authorization).toBe(`Bearer ${kApiKey}`);
    expect(trap.connections).toEqual([]);

    // One usage line per task, each with its own codex thread and the tokens the server reported for it.
    const lines = usageLinesOf(dir);
    expect(lines.map((line) => line.task).sort()).toEqual([...ids, 'E']);
    expect(new Set(lines.map((line) => line.agent_session)).size).toBe(5);
    expect(lines.every((line) => line.kind === 'agent' && line.reported === true && line.completion_tokens === 50 && line.cached_tokens === 100)).toBe(true);
    expect(lines.map((line) => line.prompt_tokens).sort()).toEqual([1000, 1001, 1002, 1003, 1004]);

    seen.push(await dumpAll(each.redis.url));
    // The scan saw the jobs' texts (their rows and prompts) and the replies, so it would have seen the key too.
    const values = seen.flatMap((dumps) => [...dumps.values()]);
    expect(values.some((dump) => dump.includes('Write part A') && dump.includes('"codex"'))).toBe(true);
    expect(values.some((dump) => dump.includes('part 0 written'))).toBe(true);
    for (const dumps of seen) for (const [key, dump] of dumps) expect(dump.includes(kApiKey) || dump.includes(kTestSecret), key).toBe(false);
    for (const file of filesUnder(dir)) expect(readFileSync(file).includes(kApiKey) || readFileSync(file).includes(kTestSecret), file).toBe(false);
    expect([...rows.values()].some((row) => row.findings === 'part 1 written, and the secret is ***')).toBe(true);
    for (const worker of workers) expect(worker.stdoutSoFar() + worker.stderrSoFar()).not.toContain(kApiKey);
    expect(run.stdout + run.stderr).not.toContain(kApiKey);
  });

  it('a signed job asking for a sandbox, CLI arguments, tools, a model server or an agent the worker did not allow is refused, never run; one within its flags runs', { timeout: 600_000 }, async () => {
    server = await startResponsesServer([{ kind: 'text', text: answer('allowed job done') }]);
    attacker = await startRecordingServer();
    const worker = await readyWorkerWith(agentEnv({ OPENAI_API_KEY: kApiKey }), each.redis.url, '--session-id', 'forged', '--executors', 'codex', '--allow-base-url', server.baseUrl);
    each.started.push(worker);
    const queue = 'csv-wave-forged';
    const codex: AgentSpec = { type: 'codex', model: 'scripted-model', baseUrl: server.baseUrl };
    const forged: Array<[string, AttemptRequest, RegExp]> = [
      ['SB', codexRequest('SB', { ...codex, sandbox: 'workspace-write' }), /its agent settings ask for the sandbox workspace-write, which this worker does not allow \(--allow-sandbox; allowed: read-only\)/],
      ['AR', codexRequest('AR', { ...codex, args: ['--dangerously-bypass-approvals-and-sandbox'] }), /its agent settings add args \(1\), which this worker does not run \(--allow-agent-args\)/],
      ['TL', codexRequest('TL', { ...codex, allowedTools: ['Bash'] }), /its agent settings add allowed_tools \(1\), which this worker does not run \(--allow-agent-args\)/],
      ['BU', codexRequest('BU', { ...codex, baseUrl: attacker.baseUrl }), /its agent settings name the model server http:\/\/127\.0\.0\.1:\d+\/v1, not one this worker sends its key to \(--allow-base-url/],
      ['RO', codexRequest('RO', { ...codex, roles: { worker: { sandbox: 'workspace-write' as const, baseUrl: attacker.baseUrl } } }), /the settings of its role worker ask for the sandbox workspace-write/],
      ['AG', codexRequest('AG', codex, { agent: 'claude' }), /its row's agent claude is not one this worker runs \(--executors codex\)/],
      ['BI', codexRequest('BI', { ...codex, binary: '/bin/sh' } as AgentSpec), /its agent settings hold "binary", which this worker does not know/],
      ['EF', codexRequest('EF', { ...codex, effort: 'high"\nsandbox_mode="danger-full-access' }), /its agent settings give an effort .* that is not a word/],
    ];
    for (const [id, request] of forged) await addByHand(each.redis.url, queue, `forged.${id}.a1`, jobData(request, queue, `forged.${id}.a1`, kTestSecret));
    // Last, within the worker's flags: it runs (concurrency 1 takes the jobs in order), so the refusals above were decided, not skipped.
    await addByHand(each.redis.url, queue, 'forged.OK.a1', jobData(codexRequest('OK', codex), queue, 'forged.OK.a1', kTestSecret));
    await waitFor(() => worker.stdoutSoFar().includes('[JOB] forged.OK.a1 completed'), 'the allowed job to run');

    const log = worker.stdoutSoFar();
    for (const [id, , why] of forged) {
      expect(log, id).toMatch(new RegExp(`\\[JOB\\] forged\\.${id}\\.a1 refused: ${why.source}`));
      const outcome = await jobOutcome(each.redis.url, queue, `forged.${id}.a1`);
      expect(outcome.state, id).toBe('failed');
      expect(outcome.failedReason, id).toMatch(/^csv-wave: refused by worker [^:]+:\d+: /);
    }
    // Codex ran once, for the allowed job: no refused job reached a model server, the attacker's least of all.
    expect(server.responseBodies()).toHaveLength(1);
    expect(attacker.requests).toEqual([]);
    expect(trap.connections).toEqual([]);
  });

  it('--allow-sandbox and --allow-agent-args widen what a worker runs, and only that', { timeout: 600_000 }, async () => {
    server = await startResponsesServer((_request, index) => ({ kind: 'text', text: answer(`run ${index}`) }));
    const worker = await readyWorkerWith(agentEnv({ OPENAI_API_KEY: kApiKey }), each.redis.url, '--session-id', 'wide', '--executors', 'codex',
      '--allow-base-url', server.baseUrl, '--allow-sandbox', 'workspace-write', '--allow-agent-args');
    each.started.push(worker);
    expect(worker.stdoutSoFar()).toContain('codex jobs in the sandboxes read-only, workspace-write, with CLI arguments or tools of their own');
    const queue = 'csv-wave-wide';
    const codex: AgentSpec = { type: 'codex', model: 'scripted-model', baseUrl: server.baseUrl };
    await addByHand(each.redis.url, queue, 'wide.SB.a1', jobData(codexRequest('SB', { ...codex, sandbox: 'workspace-write' }), queue, 'wide.SB.a1', kTestSecret));
    // Still not a model server it allows.
    await addByHand(each.redis.url, queue, 'wide.BU.a1', jobData(codexRequest('BU', { ...codex, baseUrl: 'http://127.0.0.1:1/v1' }), queue, 'wide.BU.a1', kTestSecret));
    await waitFor(() => /\[JOB\] wide\.BU\.a1 refused/.test(worker.stdoutSoFar()), 'the job naming another server to be refused');
    await waitFor(() => worker.stdoutSoFar().includes('[JOB] wide.SB.a1 completed'), 'the workspace-write job to run');
    expect(server.responseBodies()).toHaveLength(1);
  });

  it('a worker offering codex checks the CLI once when it starts: without it on PATH, exit 2 saying what to do, before Redis is reached', { timeout: 120_000 }, async () => {
    const missing = spawnCliWith({ env: { ...agentEnv().env, PATH: '/nonexistent' } }, 'worker', '--redis', 'redis://127.0.0.1:1', '--executors', 'codex');
    const exited = await missing.exited;
    expect(exited.code).toBe(2);
    expect(exited.stderr).toMatch(/csv-wave worker --executors codex: the Codex CLI \(codex\) is not on PATH; install it with npm install -g @openai\/codex/);
    expect(exited.stderr).not.toMatch(/Redis|ECONNREFUSED/);
    const badSandbox = await spawnCliWith(agentEnv(), 'worker', '--redis', 'redis://127.0.0.1:1', '--executors', 'codex', '--allow-sandbox', 'danger-full-access').exited;
    expect(badSandbox.code).toBe(2);
    expect(badSandbox.stderr.trim()).toBe('Expected `--allow-sandbox` to be read-only or workspace-write, got `danger-full-access`');
  });
});

describe.runIf(kRunRedisTests)('csv-wave worker without --executors', () => {
  const each = redisForEachTest();

  it('offers no agent: a signed codex job is refused, naming --executors', { timeout: 300_000 }, async () => {
    const worker = await readyWorkerWith({ env: { PATH: '/usr/bin:/bin' } }, each.redis.url, '--session-id', 'plain');
    each.started.push(worker);
    expect(worker.stdoutSoFar()).toContain('runs command, module, openai jobs');
    const queue = 'csv-wave-plain';
    await addByHand(each.redis.url, queue, 'plain.A.a1', jobData(codexRequest('A', { type: 'codex', model: 'm' }), queue, 'plain.A.a1', kTestSecret));
    await waitFor(() => /\[JOB\] plain\.A\.a1 refused: its executor codex is not one this worker runs \(--executors command,module,openai\)/.test(worker.stdoutSoFar()), 'the refusal');
  });
});
