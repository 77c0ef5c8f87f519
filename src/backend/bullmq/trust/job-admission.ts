import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { kDefaultClaudeMaxTurns } from '../../../executors/agents/claude/args.js';
import { agentSettingsFor, baseAgentSettings, type AgentOverride, type AgentRowCells, type AgentSpec } from '../../../executors/agents/settings.js';
import type { AttemptRequest, ExecutorSpec } from '../../../executors/messages.js';
import { kAnthropicBaseUrl, kOfficialBaseUrl, kSessionIdPattern, kWorkerAgentTypes, kWorkerExecutorTypes, kWorkerSandboxes } from '../../../option-table.js';
import { kTaskIdPattern } from '../../../schema/row.js';
import type { CodexSandbox } from '../../../schema/session.js';
import { jobSigned, replySigned, requestDigest, type Signing } from './signing.js';
import type { JobReplyEnvelope } from '../jobs/job-data.js';

/** The executors a worker may offer (`--executors`, defined in the options table): each one an executor's type. */
export const kExecutorTypes = kWorkerExecutorTypes satisfies readonly ExecutorSpec['type'][];
export type ExecutorType = (typeof kExecutorTypes)[number];

/**
 * The agent CLIs a worker may offer (option-table.ts kWorkerAgentTypes): their jobs are
 * judged by agentRefusal, the same rules for each.
 */
export const kAgentTypes = kWorkerAgentTypes satisfies readonly AgentSpec['type'][];
export type AgentType = (typeof kAgentTypes)[number];

/** The sandboxes `--allow-sandbox` takes: codex's, no more, no fewer (claude's are its tools: read-only, or with its edit tools). */
export type WorkerSandbox = (typeof kWorkerSandboxes)[number];
const kSandboxesMatch: [WorkerSandbox, CodexSandbox] extends [CodexSandbox, WorkerSandbox] ? true : never = true;
void kSandboxesMatch;

/** The sandbox an agent job runs in when it asks for none: always allowed. */
export const kDefaultSandbox: WorkerSandbox = 'read-only';

/** The model server the openai SDK talks to when none is given: the worker's own OPENAI_BASE_URL, else OpenAI's (the table's). */
export { kOfficialBaseUrl };

/** The Messages-API server claude talks to when none is given: the worker's own ANTHROPIC_BASE_URL, else Anthropic's (the table's). */
export { kAnthropicBaseUrl };

/**
 * The turns an agent job may ask for (`max_turns`) without `--allow-agent-args`: claude's
 * default. More turns are more tool calls, on the worker's key.
 */
export const kWorkerMaxTurns = kDefaultClaudeMaxTurns;

/** What a worker runs: the jobs signed with its secret, of the executors it offers, sending its key only where it allows. */
export interface WorkerRules {
  signing: Signing;
  /** `--executors`. @default every executor */
  executors: ReadonlySet<ExecutorType>;
  /**
   * The model servers an openai job may talk to, as `baseUrlKey` gives them (`--allow-base-url`).
   * @default the worker's own OPENAI_BASE_URL, else kOfficialBaseUrl
   */
  baseUrls: ReadonlySet<string>;
  /** The worker's own OPENAI_BASE_URL (the SDK's default when a job names none). */
  ownBaseUrl: string | undefined;
  /**
   * The Messages-API servers a claude job may name, where claude sends the worker's
   * ANTHROPIC_API_KEY (or its token), as `baseUrlKey` gives them (`--allow-base-url`).
   * @default the worker's own ANTHROPIC_BASE_URL, else kAnthropicBaseUrl
   */
  claudeBaseUrls: ReadonlySet<string>;
  /** The sandboxes agent jobs may run in (`--allow-sandbox`, and kDefaultSandbox always). @default read-only */
  sandboxes: ReadonlySet<string>;
  /** `--allow-agent-args`: agent jobs may add CLI arguments (args) and tools (allowed_tools), and ask for more than kWorkerMaxTurns turns. @default false */
  agentArgs: boolean;
}

/** A job a worker takes: run its request, or refuse it, saying why. */
export type Admission = { kind: 'run'; request: AttemptRequest; digest: string } | { kind: 'refuse'; why: string };

/**
 * Whether a worker runs a job it took from Redis, where anyone who can write to it could
 * have put or changed it: its signature must verify over its queue, its id and the digest
 * of the request it holds (recomputed here, never taken from the job), and its executor
 * must be one the worker offers, talking to a model server the worker allows. Refused
 * jobs are never run, signed or not.
 */
export function admitJob(queue: string, jobId: string, data: unknown, rules: WorkerRules): Admission {
  const job = (data ?? {}) as { request?: unknown; sig?: unknown };
  const request = job.request as AttemptRequest | undefined;
  if (request === null || typeof request !== 'object' || typeof request.executor?.type !== 'string') {
    return { kind: 'refuse', why: 'its data holds no attempt request' };
  }
  let digest: string;
  try {
    digest = requestDigest(request);
  } catch (error) {
    return { kind: 'refuse', why: `its request cannot be read (${(error as Error).message})` };
  }
  const unsigned = rules.signing.refusal(jobSigned(queue, jobId, digest), job.sig);
  if (unsigned !== undefined) return { kind: 'refuse', why: unsigned };
  // The id names folders on the worker (`workdirs/<id>`, emptied first): never one with a `/` or a `..` (as every row's id is).
  const taskId: unknown = request.task?.id;
  if (typeof taskId !== 'string' || !kTaskIdPattern.test(taskId)) {
    return { kind: 'refuse', why: `its task id ${JSON.stringify(String(taskId).slice(0, 40))} is not a task id (letters, digits, . _ -)` };
  }
  const misplaced = workdirRefusal(request.workdir, taskId);
  if (misplaced !== undefined) return { kind: 'refuse', why: misplaced };
  const type = request.executor.type;
  if (!rules.executors.has(type as ExecutorType)) {
    return { kind: 'refuse', why: `its executor ${String(type).slice(0, 40)} is not one this worker runs (--executors ${[...rules.executors].join(',')})` };
  }
  if (isAgentType(type)) {
    const why = agentRefusal(request.executor as AgentSpec, request.task?.row, rules);
    if (why !== undefined) return { kind: 'refuse', why };
  }
  if (request.executor.type === 'openai') {
    // Where the openai SDK will send it: a URL given (an empty one means OpenAI's), else OPENAI_BASE_URL, else OpenAI's.
    const given = request.executor.baseUrl;
    const url = given !== undefined ? given || kOfficialBaseUrl : (rules.ownBaseUrl ?? kOfficialBaseUrl);
    const key = baseUrlKey(url);
    if (key === undefined || !rules.baseUrls.has(key)) {
      return {
        kind: 'refuse',
        why: `its model server ${String(url).slice(0, 200)} is not one this worker sends its key to (--allow-base-url; allowed: ${[...rules.baseUrls].join(', ')})`,
      };
    }
  }
  return { kind: 'run', request, digest };
}

/** The fields a worktree plan has (executors/workdir/workdir-plan.ts WorktreePlan). */
const kWorktreePlanKeys = ['mode', 'repo', 'base', 'branch', 'replaced', 'path', 'keep'];

/**
 * Why a job's workdir plan is refused, or undefined. The worker empties the plan's folder
 * and runs git there, so a plan may name only what the run itself makes: `task` (a folder
 * of the job's own), or a worktree at `<…>/worktrees/<task id>` inside the repository it
 * names, on the task's own branches, from a commit named by its hash.
 */
export function workdirRefusal(plan: unknown, taskId: string): string | undefined {
  if (plan === undefined) return undefined;
  if (plan === null || typeof plan !== 'object' || Array.isArray(plan)) return 'its workdir plan is not an object';
  const fields = plan as Record<string, unknown>;
  if (fields['mode'] === 'task') return Object.keys(fields).length === 1 ? undefined : 'its workdir plan holds more than its mode';
  if (fields['mode'] !== 'worktree') return `its workdir mode ${JSON.stringify(String(fields['mode']).slice(0, 40))} is not task or worktree`;
  const extra = Object.keys(fields).filter((key) => !kWorktreePlanKeys.includes(key));
  if (extra.length > 0) return `its worktree plan holds ${shownKeys(extra)}, which this worker does not know (a newer coordinator?) and so does not run`;
  const { repo, path, base, branch, replaced, keep } = fields;
  const plain = (value: unknown): value is string => typeof value === 'string' && isAbsolute(value) && resolve(value) === value && !value.includes('\0');
  if (!plain(repo) || repo === '/') return 'its worktree plan names no repository folder (an absolute path)';
  if (!plain(path) || !path.startsWith(`${repo}/`) || basename(path) !== taskId || basename(dirname(path)) !== 'worktrees') {
    return `its worktree folder ${JSON.stringify(String(path).slice(0, 200))} is not <session>/worktrees/${taskId} inside its repository`;
  }
  if (typeof base !== 'string' || !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(base)) return 'its worktree base is not a commit hash';
  const ours = (value: unknown, prefix: string) => typeof value === 'string' && value.startsWith(prefix) && value.endsWith(`/${taskId}`) && kSessionIdPattern.test(value.slice(prefix.length, -taskId.length - 1));
  if (!ours(branch, 'csv-wave/') || !ours(replaced, 'csv-wave-replaced/')) return `its worktree branches are not the task's own (csv-wave/<session id>/${taskId})`;
  if (typeof keep !== 'boolean') return 'its worktree plan says neither keep nor not';
  return undefined;
}

function isAgentType(type: string): type is AgentType {
  return (kAgentTypes as readonly string[]).includes(type);
}

/** What an agent spec may hold: a field this worker does not know is one it cannot judge. */
const kAgentSpecKeys = new Set(['type', 'model', 'baseUrl', 'sandbox', 'maxTurns', 'allowedTools', 'effort', 'args', 'promptsDir', 'roles']);
/** What a role's override may hold (agents/settings.ts AgentOverride). */
const kAgentOverrideKeys = new Set(['agent', 'model', 'baseUrl', 'sandbox', 'maxTurns', 'allowedTools', 'effort', 'args']);
/** A reasoning effort is a word (low, medium, high…): it goes into a `-c` value of codex's. */
const kEffortPattern = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Why an agent job is refused, or undefined when the worker runs it. The agent runs a
 * program with tools on this machine, so whatever in the job could widen what it may do is
 * held to the worker's own flags, in the run's settings and in every role's override alike
 * (whichever the task's role picks), and in the row's cells: the agent it names must be one
 * the worker offers, its sandbox one `--allow-sandbox` allows, extra CLI arguments or tools,
 * or more turns than kWorkerMaxTurns, need `--allow-agent-args`, a base URL (where the CLI
 * sends the worker's key: OPENAI_API_KEY for codex, ANTHROPIC_API_KEY for claude) one
 * `--allow-base-url` allows for the agent that uses it, the one the task runs with included
 * (a row's agent cell keeps the base URL of its settings). The program itself is never the
 * job's to choose: the spec has no field for it, and a field this worker does not know
 * refuses the job.
 */
export function agentRefusal(spec: AgentSpec, row: Readonly<Record<string, unknown>> | undefined, rules: WorkerRules): string | undefined {
  const unknown = Object.keys(spec).filter((key) => !kAgentSpecKeys.has(key));
  if (unknown.length > 0) return `its agent settings hold ${shownKeys(unknown)}, which this worker does not know (a newer coordinator?) and so does not run`;
  const roles: unknown = spec.roles ?? {};
  if (roles === null || typeof roles !== 'object' || Array.isArray(roles)) return 'its agent settings hold roles that are not an object';
  const { type: _type, promptsDir: _prompts, roles: _roles, ...base } = spec;
  const layers: Array<[string, unknown]> = [['its agent settings', base], ...Object.entries(roles).map(([role, override]): [string, unknown] => [`the settings of its role ${role.slice(0, 64)}`, override])];
  for (const [where, layer] of layers) {
    if (layer === null || typeof layer !== 'object' || Array.isArray(layer)) return `${where} are not an object`;
    const extra = where === 'its agent settings' ? [] : Object.keys(layer).filter((key) => !kAgentOverrideKeys.has(key));
    if (extra.length > 0) return `${where} hold ${shownKeys(extra)}, which this worker does not know (a newer coordinator?) and so does not run`;
    const why = settingsRefusal(layer as AgentOverride, spec.type as AgentType, rules);
    if (why !== undefined) return `${where} ${why}`;
  }
  // The row's cells win over the settings (agentSettingsFor): its agent and effort are judged too.
  const cell = (name: string) => (typeof row?.[name] === 'string' ? (row[name] as string).trim() : '');
  if (cell('agent') !== '' && !(isAgentType(cell('agent')) && rules.executors.has(cell('agent') as AgentType))) {
    return `its row's agent ${cell('agent').slice(0, 40)} is not one this worker runs (--executors ${[...rules.executors].join(',')})`;
  }
  if (cell('effort') !== '' && !kEffortPattern.test(cell('effort'))) return `its row's effort ${JSON.stringify(cell('effort').slice(0, 40))} is not a word`;
  // What the task runs with: a row or role that switches agent keeps the base URL of the settings below it.
  const cells: AgentRowCells = {};
  for (const name of ['role', 'agent', 'model', 'effort'] as const) if (typeof row?.[name] === 'string') cells[name] = row[name] as string;
  const task = agentSettingsFor(baseAgentSettings(spec), roles as Record<string, AgentOverride>, cells);
  if (task.baseUrl !== undefined && !allowsBaseUrl(task.agent as AgentType, task.baseUrl, rules)) {
    return `its task runs ${task.agent} with the model server ${String(task.baseUrl).slice(0, 200)}, not one this worker sends its key to (--allow-base-url; allowed for ${task.agent}: ${[...baseUrlsFor(task.agent as AgentType, rules)].join(', ')})`;
  }
  return undefined;
}

/** The model servers a job of `agent` may name: those of the key it sends (claude: ANTHROPIC_API_KEY; codex: OPENAI_API_KEY). */
function baseUrlsFor(agent: AgentType, rules: WorkerRules): ReadonlySet<string> {
  return agent === 'claude' ? rules.claudeBaseUrls : rules.baseUrls;
}

function allowsBaseUrl(agent: AgentType, baseUrl: unknown, rules: WorkerRules): boolean {
  const key = typeof baseUrl === 'string' ? baseUrlKey(baseUrl) : undefined;
  return key !== undefined && baseUrlsFor(agent, rules).has(key);
}

/**
 * Why one layer of agent settings asks for more than the worker allows. Its base URL is
 * judged for the agent of the layer: a role's own `agent`, else the run's (`runAgent`).
 */
function settingsRefusal(settings: AgentOverride, runAgent: AgentType, rules: WorkerRules): string | undefined {
  if (settings.agent !== undefined && !(typeof settings.agent === 'string' && isAgentType(settings.agent) && rules.executors.has(settings.agent))) {
    return `name the agent ${String(settings.agent).slice(0, 40)}, not one this worker runs (--executors ${[...rules.executors].join(',')})`;
  }
  if (settings.model !== undefined && typeof settings.model !== 'string') return 'give a model that is not a string';
  if (settings.maxTurns !== undefined) {
    if (typeof settings.maxTurns !== 'number' || !Number.isSafeInteger(settings.maxTurns) || settings.maxTurns < 1) {
      return `give max_turns ${JSON.stringify(settings.maxTurns)?.slice(0, 40)}, not a positive integer`;
    }
    if (settings.maxTurns > kWorkerMaxTurns && !rules.agentArgs) {
      return `ask for max_turns ${settings.maxTurns}, more than the ${kWorkerMaxTurns} this worker allows (--allow-agent-args)`;
    }
  }
  if (settings.sandbox !== undefined && !rules.sandboxes.has(settings.sandbox)) {
    return `ask for the sandbox ${String(settings.sandbox).slice(0, 40)}, which this worker does not allow (--allow-sandbox; allowed: ${[...rules.sandboxes].join(', ')})`;
  }
  for (const [field, flagged] of [['args', settings.args], ['allowed_tools', settings.allowedTools]] as const) {
    if (flagged === undefined) continue;
    if (!Array.isArray(flagged) || flagged.some((each) => typeof each !== 'string')) return `give ${field} that are not a list of strings`;
    if (flagged.length > 0 && !rules.agentArgs) return `add ${field} (${flagged.length}), which this worker does not run (--allow-agent-args)`;
  }
  if (settings.effort !== undefined && (typeof settings.effort !== 'string' || !kEffortPattern.test(settings.effort))) {
    return `give an effort ${JSON.stringify(String(settings.effort).slice(0, 40))} that is not a word`;
  }
  if (settings.baseUrl !== undefined) {
    // An agent the worker offers (checked above): the role's own, else the run's.
    const agent = (settings.agent ?? runAgent) as AgentType;
    if (!allowsBaseUrl(agent, settings.baseUrl, rules)) {
      return `name the model server ${String(settings.baseUrl).slice(0, 200)}, not one this worker sends its key to (--allow-base-url; allowed for ${agent}: ${[...baseUrlsFor(agent, rules)].join(', ')})`;
    }
  }
  return undefined;
}

function shownKeys(keys: readonly string[]): string {
  return keys.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 40))).join(', ');
}

/**
 * A model server's URL as the allow-list compares it: scheme, host, port and path, without
 * a final `/`, query or fragment (where the SDK's requests go); undefined when it is no
 * http(s) URL.
 */
export function baseUrlKey(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  // Credentials in the URL would go with every request: such a URL is not one to send a key to either.
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** The worker's return value for a job: the reply text with the digest of the request it ran, signed (job-data.ts JobReplyEnvelope). */
export function sealReply(signing: Signing, queue: string, jobId: string, digest: string, reply: string): string {
  const sig = signing.sign(replySigned(queue, jobId, digest, reply));
  const envelope: JobReplyEnvelope = sig === undefined ? { v: 1, digest, reply } : { v: 1, digest, reply, sig };
  return JSON.stringify(envelope);
}
