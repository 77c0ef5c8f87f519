import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitJob, baseUrlKey, kWorkerMaxTurns, sealReply, type WorkerRules } from '../../src/backend/bullmq/trust/job-admission.js';
import { openJobReply } from '../../src/backend/bullmq/trust/reply-envelope.js';
import { canonicalJson, compactDigest, jobSigned, replySigned, requestDigest, Signing } from '../../src/backend/bullmq/trust/signing.js';
import type { AgentSpec } from '../../src/executors/agents/settings.js';
import { handMadeRequest, jobData } from '../helpers/bullmq-jobs.js';

const kSecret = 'unit-secret-0123456789abcdef0123456789abcdef';
const signing = Signing.withSecret(kSecret);

describe('canonical JSON and digests', () => {
  it('sorts keys at every level and writes the rest as JSON.stringify does', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, undefined, { f: 1, e: 2 }], c: undefined } })).toBe('{"a":{"d":[3,null,{"e":2,"f":1}]},"b":1}');
    expect(canonicalJson({ when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson('a\u2028"b')).toBe(JSON.stringify('a\u2028"b'));
  });

  it('a value and its JSON round trip (through Redis) have the same digest, whatever the order of their keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const roundTrip = JSON.parse(JSON.stringify(value)) as unknown;
        expect(requestDigest(roundTrip)).toBe(requestDigest(value));
      }),
      { numRuns: 200 },
    );
    expect(requestDigest({ a: 1, b: [1, 2] })).toBe(requestDigest({ b: [1, 2], a: 1 }));
    expect(requestDigest({ a: 1 })).not.toBe(requestDigest({ a: 2 }));
  });
});

describe('Signing', () => {
  it('verifies its own signature, and nothing else', () => {
    const fields = jobSigned('q', 'j', requestDigest({ x: 1 }));
    const sig = signing.sign(fields)!;
    expect(signing.refusal(fields, sig)).toBeUndefined();
    expect(signing.refusal(fields, undefined)).toMatch(/it is not signed/);
    expect(signing.refusal(fields, '')).toMatch(/it is not signed/);
    expect(signing.refusal(fields, 'zz')).toMatch(/does not verify/);
    expect(signing.refusal(fields, sig.toUpperCase())).toMatch(/does not verify/);
    expect(signing.refusal(jobSigned('q', 'other', requestDigest({ x: 1 })), sig)).toMatch(/does not verify/);
    expect(Signing.withSecret(`${kSecret}x`).refusal(fields, sig)).toMatch(/does not verify/);
  });

  it('without a secret signs nothing and takes every signature', () => {
    const insecure = Signing.insecure();
    expect(insecure.sign({ a: 1 })).toBeUndefined();
    expect(insecure.refusal({ a: 1 }, undefined)).toBeUndefined();
    expect(insecure.refusal({ a: 1 }, 'forged')).toBeUndefined();
  });

  it('refuses a short secret', () => {
    expect(() => Signing.withSecret('short')).toThrow(/at least 32 characters/);
  });
});

describe('a worker admits a job', () => {
  const rules: WorkerRules = {
    signing,
    executors: new Set(['command', 'module', 'openai']),
    baseUrls: new Set(['https://api.openai.com/v1']),
    ownBaseUrl: undefined,
    claudeBaseUrls: new Set(),
    sandboxes: new Set(['read-only']),
    agentArgs: false,
  };
  const command = handMadeRequest('A', { type: 'command', template: 'true' });

  it('signed for its queue, id and request: run, with the digest of what it got', () => {
    const admission = admitJob('q', 'j', jobData(command, 'q', 'j', kSecret), rules);
    expect(admission).toEqual({ kind: 'run', request: command, digest: requestDigest(command) });
  });

  it.each([
    ['no data', undefined, /no attempt request/],
    ['a request without an executor', { request: { task: {} } }, /no attempt request/],
    ['an unsigned job', jobData(command, 'q', 'j'), /not signed/],
    ['a job signed for another queue', jobData(command, 'other', 'j', kSecret), /does not verify/],
    ['a changed request', { ...jobData(command, 'q', 'j', kSecret), request: { ...command, timeoutMs: 1 } }, /does not verify/],
    // Signed all the same: its id would name a folder outside the job's (`workdirs/<id>` is emptied first).
    ['a task id that climbs out', jobData({ ...command, task: { ...command.task, id: '../../home' } }, 'q', 'j', kSecret), /^its task id "\.\.\/\.\.\/home" is not a task id/],
    ['a task id that is no string', jobData({ ...command, task: { ...command.task, id: 7 as unknown as string } }, 'q', 'j', kSecret), /^its task id "7" is not a task id/],
  ])('%s: refused', (_what, data, why) => {
    const admission = admitJob('q', 'j', data, rules);
    expect(admission.kind).toBe('refuse');
    if (admission.kind === 'refuse') expect(admission.why).toMatch(why);
  });

  it('a workdir plan names only what a run makes: a task folder, or a worktree at <session>/worktrees/<id> inside its repository on the task\'s branches', () => {
    const good = { mode: 'worktree', repo: '/srv/repo', base: 'a'.repeat(40), branch: 'csv-wave/s-1/A', replaced: 'csv-wave-replaced/s-1/A', path: '/srv/repo/work/ses/worktrees/A', keep: false };
    const admitted = (workdir: unknown) => {
      const request = { ...command, workdir } as typeof command;
      const admission = admitJob('q', 'j', jobData(request, 'q', 'j', kSecret), rules);
      return admission.kind === 'run' ? 'run' : admission.why;
    };
    expect(admitted(undefined)).toBe('run');
    expect(admitted({ mode: 'task' })).toBe('run');
    expect(admitted(good)).toBe('run');
    const refused: [string, unknown, RegExp][] = [
      ['a task plan with more', { mode: 'task', path: '/etc' }, /holds more than its mode/],
      ['another mode', { mode: 'home' }, /is not task or worktree/],
      ['a folder outside the repository', { ...good, path: '/home/u/worktrees/A' }, /is not <session>\/worktrees\/A inside its repository/],
      ['a folder that climbs out', { ...good, path: '/srv/repo/../../home/worktrees/A' }, /is not <session>\/worktrees\/A/],
      ['another task\'s folder', { ...good, path: '/srv/repo/ses/worktrees/B' }, /is not <session>\/worktrees\/A/],
      ['a folder not under worktrees/', { ...good, path: '/srv/repo/src/A' }, /is not <session>\/worktrees\/A/],
      ['the root as repository', { ...good, repo: '/', path: '/x/worktrees/A' }, /names no repository folder/],
      ['a relative repository', { ...good, repo: 'repo' }, /names no repository folder/],
      ['a base that is a ref', { ...good, base: 'main' }, /is not a commit hash/],
      ['another branch', { ...good, branch: 'main' }, /branches are not the task's own/],
      ['another task\'s branch', { ...good, branch: 'csv-wave/s-1/B' }, /branches are not the task's own/],
      ['a replaced branch elsewhere', { ...good, replaced: 'refs/heads/main' }, /branches are not the task's own/],
      ['an unknown field', { ...good, hook: 'x' }, /which this worker does not know/],
    ];
    for (const [what, plan, why] of refused) expect(admitted(plan), what).toMatch(why);
  });

  it('a model server is compared by scheme, host, port and path; one with credentials is none', () => {
    expect(baseUrlKey('https://API.openai.com/v1/')).toBe('https://api.openai.com/v1');
    expect(baseUrlKey('http://127.0.0.1:8080/v1?x=1#y')).toBe('http://127.0.0.1:8080/v1');
    expect(baseUrlKey('http://u:p@127.0.0.1/v1')).toBeUndefined();
    expect(baseUrlKey('file:///etc')).toBeUndefined();
    expect(baseUrlKey('not a url')).toBeUndefined();
    const openai = (baseUrl?: string) => handMadeRequest('M', { type: 'openai', model: 'm', ...(baseUrl === undefined ? {} : { baseUrl }) });
    for (const [baseUrl, kind] of [[undefined, 'run'], ['', 'run'], ['https://api.openai.com/v1/', 'run'], ['https://api.openai.com.evil/v1', 'refuse'], ['http://api.openai.com/v1', 'refuse']] as const) {
      expect(admitJob('q', 'j', jobData(openai(baseUrl), 'q', 'j', kSecret), rules).kind, String(baseUrl)).toBe(kind);
    }
    // With its own OPENAI_BASE_URL, a job naming none goes there (one naming '' goes to OpenAI's, as the SDK does).
    const own = { ...rules, ownBaseUrl: 'http://127.0.0.1:1/v1' };
    expect(admitJob('q', 'j', jobData(openai(), 'q', 'j', kSecret), own).kind).toBe('refuse');
    expect(admitJob('q', 'j', jobData(openai(''), 'q', 'j', kSecret), own).kind).toBe('run');
    expect(admitJob('q', 'j', jobData(openai(), 'q', 'j', kSecret), { ...own, baseUrls: new Set(['http://127.0.0.1:1/v1']) }).kind).toBe('run');
  });
});

describe('a worker admits an agent job (agentRefusal)', () => {
  const rules: WorkerRules = {
    signing,
    executors: new Set(['codex', 'command', 'module']),
    baseUrls: new Set(['http://127.0.0.1:9/v1']),
    ownBaseUrl: undefined,
    claudeBaseUrls: new Set(),
    sandboxes: new Set(['read-only']),
    agentArgs: false,
  };
  const codex = (settings: Record<string, unknown> = {}, row: Record<string, string> = {}) => {
    const request = handMadeRequest('A', { type: 'codex', model: 'm', ...settings } as AgentSpec);
    return { ...request, task: { ...request.task, row: { ...request.task.row, ...row } } };
  };
  const admitted = (request: ReturnType<typeof codex>, with_: Partial<WorkerRules> = {}) => {
    const admission = admitJob('q', 'j', jobData(request, 'q', 'j', kSecret), { ...rules, ...with_ });
    return admission.kind === 'run' ? 'run' : admission.why;
  };

  it('within the flags: run (no base URL is the worker own codex configuration; read-only is always allowed)', () => {
    expect(admitted(codex())).toBe('run');
    expect(admitted(codex({ sandbox: 'read-only', baseUrl: 'http://127.0.0.1:9/v1/', effort: 'high', maxTurns: 3, args: [], roles: { writer: { model: 'n', agent: 'codex' } } }, { agent: 'codex', effort: 'low' }))).toBe('run');
  });

  it.each([
    ['a sandbox not allowed', codex({ sandbox: 'workspace-write' }), /^its agent settings ask for the sandbox workspace-write, which this worker does not allow \(--allow-sandbox; allowed: read-only\)$/],
    ['a sandbox codex does not have', codex({ sandbox: 'danger-full-access' }), /ask for the sandbox danger-full-access/],
    ['a role asking for a sandbox', codex({ roles: { writer: { sandbox: 'workspace-write' } } }), /^the settings of its role writer ask for the sandbox/],
    ['CLI arguments', codex({ args: ['-c', 'sandbox_mode="danger-full-access"'] }), /add args \(2\), which this worker does not run \(--allow-agent-args\)/],
    ['a role adding CLI arguments', codex({ roles: { writer: { args: ['--dangerously-bypass-approvals-and-sandbox'] } } }), /^the settings of its role writer add args/],
    ['tools', codex({ allowedTools: ['Bash'] }), /add allowed_tools \(1\)/],
    ['args that are no list', codex({ args: '--x' }), /give args that are not a list of strings/],
    ['a base URL not allowed', codex({ baseUrl: 'http://127.0.0.1:10/v1' }), /name the model server http:\/\/127\.0\.0\.1:10\/v1, not one this worker sends its key to/],
    ['an empty base URL', codex({ baseUrl: '' }), /name the model server , not one/],
    ['a base URL with credentials', codex({ baseUrl: 'http://u:p@127.0.0.1:9/v1' }), /not one this worker sends its key to/],
    ['a role naming another base URL', codex({ roles: { writer: { baseUrl: 'https://evil.example/v1' } } }), /^the settings of its role writer name the model server/],
    ['a role naming an agent not offered', codex({ roles: { writer: { agent: 'claude' } } }), /name the agent claude, not one this worker runs \(--executors codex,command,module\)/],
    ['a row naming an agent not offered', codex({}, { agent: 'claude' }), /^its row's agent claude is not one this worker runs/],
    ['a row naming an executor that is no agent', codex({}, { agent: 'command' }), /^its row's agent command is not one this worker runs/],
    ['a role naming an executor that is no agent', codex({ roles: { writer: { agent: 'module' } } }), /name the agent module, not one this worker runs/],
    ['an effort that is no word', codex({ effort: 'high" x="y' }), /give an effort .* that is not a word/],
    ['a row effort that is no word', codex({}, { effort: 'a\nb' }), /^its row's effort .* is not a word/],
    ['a field the worker does not know', codex({ binary: '/bin/sh' }), /^its agent settings hold "binary", which this worker does not know/],
    ['a role field the worker does not know', codex({ roles: { writer: { env: { X: '1' } } } }), /^the settings of its role writer hold "env"/],
    ['roles that are no object', codex({ roles: ['x'] }), /roles that are not an object/],
  ])('%s: refused', (_what, request, why) => {
    expect(admitted(request)).toMatch(why);
  });

  it('--allow-sandbox, --allow-agent-args and --allow-base-url widen exactly what they name', () => {
    expect(admitted(codex({ sandbox: 'workspace-write' }), { sandboxes: new Set(['read-only', 'workspace-write']) })).toBe('run');
    expect(admitted(codex({ args: ['--search'], allowedTools: ['Read'] }), { agentArgs: true })).toBe('run');
    expect(admitted(codex({ args: ['--search'], sandbox: 'workspace-write' }), { agentArgs: true })).toMatch(/sandbox workspace-write/);
    expect(admitted(codex({ baseUrl: 'http://127.0.0.1:10/v1' }), { baseUrls: new Set(['http://127.0.0.1:10/v1']) })).toBe('run');
  });

  it('a codex job on a worker that does not offer codex (the default): refused as any executor it does not offer', () => {
    expect(admitted(codex(), { executors: new Set(['command', 'module', 'openai']) })).toMatch(/^its executor codex is not one this worker runs \(--executors command,module,openai\)$/);
  });

  it('max_turns above claude\'s default needs --allow-agent-args, whichever agent the job names (a row or role may switch it to claude)', () => {
    expect(admitted(codex({ maxTurns: kWorkerMaxTurns }))).toBe('run');
    expect(admitted(codex({ maxTurns: kWorkerMaxTurns + 1 }))).toMatch(/^its agent settings ask for max_turns 31, more than the 30 this worker allows \(--allow-agent-args\)$/);
    expect(admitted(codex({ maxTurns: kWorkerMaxTurns + 1 }), { agentArgs: true })).toBe('run');
  });
});

describe('a worker admits a claude job (agentRefusal)', () => {
  const kClaudeServer = 'http://127.0.0.1:7';
  const kCodexServer = 'http://127.0.0.1:9/v1';
  const rules: WorkerRules = {
    signing,
    executors: new Set(['claude', 'command']),
    baseUrls: new Set([kCodexServer]),
    ownBaseUrl: undefined,
    claudeBaseUrls: new Set([kClaudeServer]),
    sandboxes: new Set(['read-only']),
    agentArgs: false,
  };
  const agentJob = (type: 'claude' | 'codex', settings: Record<string, unknown> = {}, row: Record<string, string> = {}) => {
    const request = handMadeRequest('A', { type, model: 'm', ...settings } as AgentSpec);
    return { ...request, task: { ...request.task, row: { ...request.task.row, ...row } } };
  };
  const claude = (settings: Record<string, unknown> = {}, row: Record<string, string> = {}) => agentJob('claude', settings, row);
  const admitted = (request: ReturnType<typeof claude>, with_: Partial<WorkerRules> = {}) => {
    const admission = admitJob('q', 'j', jobData(request, 'q', 'j', kSecret), { ...rules, ...with_ });
    return admission.kind === 'run' ? 'run' : admission.why;
  };

  it('within the flags: run (no base URL is the worker own claude configuration; read-only, its read tools, is always allowed)', () => {
    expect(admitted(claude())).toBe('run');
    expect(admitted(claude({ sandbox: 'read-only', baseUrl: `${kClaudeServer}/`, maxTurns: kWorkerMaxTurns, effort: 'high', allowedTools: [], args: [], roles: { writer: { model: 'n', maxTurns: 3 } } }, { agent: 'claude', effort: 'low' }))).toBe('run');
  });

  it.each([
    ['the edit tools (workspace-write)', claude({ sandbox: 'workspace-write' }), /^its agent settings ask for the sandbox workspace-write, which this worker does not allow \(--allow-sandbox; allowed: read-only\)$/],
    ['a role asking for the edit tools', claude({ roles: { writer: { sandbox: 'workspace-write' } } }), /^the settings of its role writer ask for the sandbox workspace-write, which this worker does not allow \(--allow-sandbox/],
    ['a shell among its tools', claude({ allowedTools: ['Bash'] }), /^its agent settings add allowed_tools \(1\), which this worker does not run \(--allow-agent-args\)$/],
    ['edit tools named as tools', claude({ allowedTools: ['Read', 'Edit', 'Write'] }), /add allowed_tools \(3\), which this worker does not run \(--allow-agent-args\)/],
    ['a role adding tools', claude({ roles: { writer: { allowedTools: ['WebFetch'] } } }), /^the settings of its role writer add allowed_tools \(1\)/],
    ['--permission-mode bypassPermissions', claude({ args: ['--permission-mode', 'bypassPermissions'] }), /^its agent settings add args \(2\), which this worker does not run \(--allow-agent-args\)$/],
    ['--dangerously-skip-permissions', claude({ args: ['--dangerously-skip-permissions'] }), /add args \(1\), which this worker does not run \(--allow-agent-args\)/],
    ['--mcp-config', claude({ args: ['--mcp-config', '{"mcpServers":{"x":{"command":"sh"}}}'] }), /add args \(2\)/],
    ['--settings', claude({ args: ['--settings={"permissions":{"allow":["Bash"]}}'] }), /add args \(1\)/],
    ['--add-dir', claude({ args: ['--add-dir', '/'] }), /add args \(2\)/],
    ['a role adding CLI arguments', claude({ roles: { writer: { args: ['--allowedTools', 'Bash'] } } }), /^the settings of its role writer add args \(2\)/],
    ['args that are no list', claude({ args: '--dangerously-skip-permissions' }), /give args that are not a list of strings/],
    ['more turns than claude\'s default', claude({ maxTurns: kWorkerMaxTurns + 1 }), /^its agent settings ask for max_turns 31, more than the 30 this worker allows \(--allow-agent-args\)$/],
    ['a role asking for more turns', claude({ roles: { writer: { maxTurns: 1000 } } }), /^the settings of its role writer ask for max_turns 1000/],
    ['max_turns of no number', claude({ maxTurns: '5 --dangerously-skip-permissions' }), /^its agent settings give max_turns "5 --dangerously-skip-permissions", not a positive integer$/],
    ['max_turns 0', claude({ maxTurns: 0 }), /give max_turns 0, not a positive integer/],
    ['max_turns of no integer', claude({ maxTurns: 2.5 }), /give max_turns 2\.5, not a positive integer/],
    ['a base URL not allowed', claude({ baseUrl: 'https://evil.example' }), /^its agent settings name the model server https:\/\/evil\.example, not one this worker sends its key to \(--allow-base-url; allowed for claude: http:\/\/127\.0\.0\.1:7\)$/],
    ['the base URL codex jobs may name (another key goes there)', claude({ baseUrl: kCodexServer }), /name the model server http:\/\/127\.0\.0\.1:9\/v1, not one this worker sends its key to \(--allow-base-url; allowed for claude/],
    ['a base URL with credentials', claude({ baseUrl: 'http://u:p@127.0.0.1:7' }), /not one this worker sends its key to/],
    ['a role naming another base URL', claude({ roles: { writer: { baseUrl: 'https://evil.example' } } }), /^the settings of its role writer name the model server https:\/\/evil\.example/],
    ['a row naming codex, not offered', claude({}, { agent: 'codex' }), /^its row's agent codex is not one this worker runs \(--executors claude,command\)$/],
    ['a role naming codex, not offered', claude({ roles: { writer: { agent: 'codex', model: 'n' } } }), /^the settings of its role writer name the agent codex, not one this worker runs/],
    ['an effort that is no word', claude({ effort: 'high --dangerously-skip-permissions' }), /give an effort .* that is not a word/],
    ['a field the worker does not know', claude({ binary: '/bin/sh' }), /^its agent settings hold "binary", which this worker does not know/],
    ['a role field the worker does not know', claude({ roles: { writer: { env: { ANTHROPIC_BASE_URL: 'https://evil.example' } } } }), /^the settings of its role writer hold "env"/],
  ])('%s: refused', (_what, request, why) => {
    expect(admitted(request)).toMatch(why);
  });

  it('--allow-sandbox, --allow-agent-args and --allow-base-url widen exactly what they name', () => {
    expect(admitted(claude({ sandbox: 'workspace-write' }), { sandboxes: new Set(['read-only', 'workspace-write']) })).toBe('run');
    expect(admitted(claude({ args: ['--permission-mode', 'acceptEdits'], allowedTools: ['Read', 'Bash'], maxTurns: 100 }), { agentArgs: true })).toBe('run');
    expect(admitted(claude({ args: ['--add-dir', '/data'], sandbox: 'workspace-write' }), { agentArgs: true })).toMatch(/sandbox workspace-write/);
    expect(admitted(claude({ maxTurns: 100 }), { sandboxes: new Set(['read-only', 'workspace-write']) })).toMatch(/max_turns 100/);
    expect(admitted(claude({ baseUrl: 'https://evil.example' }), { claudeBaseUrls: new Set(['https://evil.example']) })).toBe('run');
    expect(admitted(claude({ baseUrl: 'https://evil.example' }), { baseUrls: new Set(['https://evil.example']) })).toMatch(/not one this worker sends its key to/);
  });

  it('a row or role switching a codex job to claude takes the run\'s base URL along: it must be one claude may name, as the task runs', () => {
    const both: Partial<WorkerRules> = { executors: new Set(['codex', 'claude']) };
    const codex = (settings: Record<string, unknown> = {}, row: Record<string, string> = {}) => agentJob('codex', { baseUrl: kCodexServer, ...settings }, row);
    expect(admitted(codex(), both)).toBe('run');
    expect(admitted(codex({}, { agent: 'claude', model: 'c' }), both)).toMatch(
      /^its task runs claude with the model server http:\/\/127\.0\.0\.1:9\/v1, not one this worker sends its key to \(--allow-base-url; allowed for claude: http:\/\/127\.0\.0\.1:7\)$/,
    );
    // The task's role (handMadeRequest's rows are workers) switches it, without a base URL of its own.
    expect(admitted(codex({ roles: { worker: { agent: 'claude', model: 'c' } } }), both)).toMatch(/^its task runs claude with the model server http:\/\/127\.0\.0\.1:9\/v1/);
    expect(admitted(codex({ roles: { worker: { agent: 'claude', model: 'c', baseUrl: kClaudeServer } } }), both)).toBe('run');
    // A role naming claude with codex's server: refused as its own settings, whichever task.
    expect(admitted(codex({ roles: { writer: { agent: 'claude', model: 'c', baseUrl: kCodexServer } } }), both)).toMatch(/^the settings of its role writer name the model server http:\/\/127\.0\.0\.1:9\/v1, not one this worker sends its key to \(--allow-base-url; allowed for claude/);
    // Without a base URL, claude uses the worker's own configuration.
    expect(admitted(agentJob('codex', {}, { agent: 'claude', model: 'c' }), both)).toBe('run');
    // And back: a claude job whose row names codex.
    expect(admitted(claude({ baseUrl: kClaudeServer }, { agent: 'codex', model: 'x' }), both)).toMatch(/^its task runs codex with the model server http:\/\/127\.0\.0\.1:7, not one/);
  });

  it('a claude job on a worker that does not offer claude (the default, or codex alone): refused as any executor it does not offer', () => {
    expect(admitted(claude(), { executors: new Set(['command', 'module', 'openai']) })).toMatch(/^its executor claude is not one this worker runs \(--executors command,module,openai\)$/);
    expect(admitted(claude(), { executors: new Set(['codex']) })).toMatch(/^its executor claude is not one this worker runs \(--executors codex\)$/);
    expect(admitted(agentJob('codex', {}, { agent: 'claude', model: 'c' }), { executors: new Set(['codex']) })).toMatch(/^its row's agent claude is not one this worker runs \(--executors codex\)$/);
  });
});

describe('the coordinator opens a reply', () => {
  const digest = requestDigest({ a: 1 });
  const expected = (warnings: string[], secure = true) => ({
    signing: secure ? signing : Signing.insecure(),
    queue: 'q',
    jobId: 'j',
    digest: compactDigest(digest),
    warn: (message: string) => warnings.push(message),
  });

  it('sealed by a worker with the secret, for the request submitted: opened', () => {
    expect(openJobReply(sealReply(signing, 'q', 'j', digest, '{"kind":"x"}'), expected([]))).toEqual({ kind: 'opened', reply: '{"kind":"x"}' });
  });

  it('of another request: not merged, a warning, the attempt tried again (with a secret or without)', () => {
    for (const secure of [true, false]) {
      const warnings: string[] = [];
      const other = requestDigest({ a: 2 });
      const opened = openJobReply(sealReply(secure ? signing : Signing.insecure(), 'q', 'j', other, '{}'), expected(warnings, secure));
      expect(opened).toMatchObject({ kind: 'refused', reply: { kind: 'error', errorClass: 'transient' } });
      expect(warnings).toEqual([expect.stringContaining('job j ran a request that is not the one this run submitted')]);
    }
  });

  it.each([
    ['unsigned', sealReply(Signing.insecure(), 'q', 'j', digest, '{}'), /not signed/],
    ['signed for another job', sealReply(signing, 'q', 'other', digest, '{}'), /does not verify/],
    ['with its reply changed', JSON.stringify({ ...JSON.parse(sealReply(signing, 'q', 'j', digest, '{}')), reply: '{"x":1}' }), /does not verify/],
    ['a bare reply', '{"kind":"finished"}', /not a signed reply envelope/],
    ['nested', JSON.stringify({ v: 1, digest, reply: '{}', sig: ['x'] }), /not a signed reply envelope/],
    ['not JSON', '{"v":', /does not parse/],
    ['no text at all', { v: 1 }, /not a signed reply envelope/],
  ])('%s: invalid output, naming the job', (_what, value, why) => {
    const opened = openJobReply(value, expected([]));
    expect(opened.kind).toBe('refused');
    if (opened.kind !== 'refused' || opened.reply.kind !== 'error') return;
    expect(opened.reply.errorClass).toBe('invalid-output');
    expect(opened.reply.error).toMatch(/^Invalid output: the reply of job j cannot be used: /);
    expect(opened.reply.error).toMatch(why);
  });

  it('the signature covers the reply text through its SHA-256', () => {
    expect(replySigned('q', 'j', digest, 'abc')).toMatchObject({ reply: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' });
  });
});
