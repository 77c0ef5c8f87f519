import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { splitList } from '../core/id-list.js';
import { agentRowCells, agentSettingsFor, baseAgentSettings, isAgentKind, type AgentSpec } from '../executors/agents/settings.js';
import type { AttemptRequest, ExecutorSpec } from '../executors/messages.js';
import { answerSchema } from '../executors/openai/contract-schema.js';
import { RolePrompts, systemPrompt } from '../executors/openai/prompt.js';
import { sessionPathForRead } from '../files/session-path.js';
import type { UpstreamTask } from '../knowledge/upstream.js';
import { kOfficialBaseUrl, kRunDefaults } from '../option-table.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import { canonicalJson, sha256 } from './canonical-json.js';

/** The version of the key's definition and of the entries' format: a change of either changes every key. */
export const kCacheFormat = 'csv-wave-cache/1';

/**
 * The row cells that are no input: the engine writes them (the output cells), or they say
 * when a task runs, not what it does (the wave). docs/cache.md lists them.
 */
export const kNotInputCells: ReadonlySet<string> = new Set(['status', 'findings', 'gc_signal', 'severity_summary', 'error', 'wave']);

/**
 * Parts that hold what every task of the session adds, in the order tasks finish: the
 * discoveries board's digest and the wisdom digest of a model prompt. They are in the key
 * (the prompt shows them), but they change whenever any later task finishes, so a task is
 * never called stale for them alone (stale.ts).
 */
export const kAmbientParts: ReadonlySet<string> = new Set(['discoveries', 'wisdom']);

/** Why a worktree task has no key. */
export const kWorktreeUncacheable = 'it works in a git worktree (--workdir worktree): its result is a commit on its branch, which the cache does not hold';

/** A task's input key (docs/cache.md). */
export interface TaskKey {
  /** SHA-256 of `inputs`: the cache entry's name. */
  key: string;
  /**
   * SHA-256 of `inputs` without the ambient parts (kAmbientParts); the key itself when the
   * task has none. Status calls a task stale when this changed.
   */
  inputKey: string;
  /** The named input parts as JSON text: `[["format","csv-wave-cache/1"],["executor","…"],…]`, in the canonical order. */
  inputs: string;
}

/** The parts of a key's `inputs` text, by name. */
export function inputsOf(inputs: string): Map<string, string> {
  const parts = new Map<string, string>();
  const parsed: unknown = JSON.parse(inputs);
  if (!Array.isArray(parsed)) return parts;
  for (const pair of parsed) if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string') parts.set(pair[0], pair[1]);
  return parts;
}

/** A task whose result the cache never holds, and why (for `explain` and the docs). */
export interface Uncacheable {
  uncacheable: string;
}

export interface KeySetup {
  sessionDir: string;
  /**
   * A task named in a `context_from` cell, as its dependents' prev_context reads it: the run's
   * row, or the session's as it stands (status). Undefined for an id no row has.
   */
  lookup: (id: string) => { status: string; findings: string } | undefined;
  /** @default the environment's secrets (SecretScrubber.fromEnv) */
  scrubber?: SecretScrubber;
}

/** One part as the key spells it: `["name","value"]`. */
type Piece = string;

/** What the tasks of one executor share: its part, the parts before the row's, and the template of each role. */
interface SharedParts {
  /** The run's executor part; undefined for an agent, whose settings are each task's. */
  executor: Piece | undefined;
  /** The pieces before the row's, by pipeline, role, workdir and topic (not an agent's). */
  prefixes: Map<string, Piece>;
  /** Model and agent executors: the roles' templates, each read once. */
  prompts?: RolePrompts;
}

/** A role's template as the key sees it. */
interface TemplatePart {
  label: string;
  piece: Piece;
  /** The placeholders it fills: only the parts of the prompt context it shows are in the key. */
  shows: ReadonlySet<string>;
}

const kPlaceholder = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g;

/**
 * Computes the input key of a task's attempt from the AttemptRequest the run sends (so that
 * the key covers exactly what the executor gets): the run's, or the one status builds
 * offline from the session folder (session-keys.ts). Every part is a text, scrubbed of the
 * environment's secrets; a file's content is given by its SHA-256. The key is the SHA-256
 * of the parts' `[name, value]` pairs as JSON, in the canonical order; the cache entry keeps
 * that text, so that status can say which part changed. What the run's tasks share (the
 * executor, the limits, each role's template and contract) is spelled once.
 * docs/cache.md gives the exact definition.
 */
export class KeyMaker {
  readonly #setup: KeySetup;
  readonly #scrubber: SecretScrubber;
  readonly #shared = new WeakMap<ExecutorSpec, SharedParts>();
  readonly #templates = new Map<string, TemplatePart>();
  readonly #contracts = new Map<string, Piece>();
  /** Artifact contents' SHA-256 by path: a dependency's files do not change while its dependents run. */
  readonly #artifacts = new Map<string, string>();
  readonly #limitsTexts = new WeakMap<object, string>();
  #lastPrefix:
    | { executor: ExecutorSpec; limits: object | undefined; role: string; pipeline: string; workdir: string | undefined; topic: string | undefined; prefix: Piece }
    | undefined;
  /** The columns of the last row seen, in its order, and its input columns sorted. */
  #columns: { seen: readonly string[]; sorted: readonly string[] } = { seen: [], sorted: [] };
  /** The name of each cell's part, by column. */
  readonly #cellNames = new Map<string, string>();

  constructor(setup: KeySetup) {
    this.#setup = setup;
    this.#scrubber = setup.scrubber ?? SecretScrubber.fromEnv();
  }

  /** The attempt's key, or why the cache never holds its result. */
  keyOf(attempt: AttemptRequest): TaskKey | Uncacheable {
    if (attempt.workdir?.mode === 'worktree') return { uncacheable: kWorktreeUncacheable };
    const { task } = attempt;
    const row = task.row;
    // The row's parts as pairs, spelled by one JSON.stringify after the shared prefix: this runs once per task of a run.
    const scrub = this.#scrubber;
    const pairs: [string, string][] = [];
    for (const name of this.#sortedColumns(row)) {
      const value = row[name];
      if (value !== undefined && value !== '') pairs.push([this.#cellName(name), scrub.text(value)]);
    }
    pairs.push(['prev_context', scrub.text(task.prev_context)]);
    const contextFrom = row['context_from'];
    if (contextFrom !== undefined && contextFrom !== '') {
      for (const id of splitList(contextFrom)) {
        const source = this.#setup.lookup(id);
        pairs.push([`ctx:${id}`, scrub.text(source?.status === 'completed' ? source.findings : '')]);
      }
    }
    for (const dep of task.upstream.deps) pairs.push([`dep:${dep.id}`, scrub.text(this.#depText(dep))]);
    if (task.upstream.warnings.length > 0) pairs.push(['warnings', scrub.text(canonicalJson(task.upstream.warnings))]);
    const inputs = `${this.#prefix(attempt)},${JSON.stringify(pairs).slice(1, -1)}`;
    const template = this.#templateOf(attempt);
    const ambient: Piece[] = [];
    if (template?.shows.has('discoveries') === true) ambient.push(this.#piece('"discoveries"', attempt.prompt?.discoveries ?? ''));
    if (template?.shows.has('wisdom') === true) ambient.push(this.#piece('"wisdom"', attempt.prompt?.wisdom ?? ''));
    if (ambient.length === 0) {
      const text = `[${inputs}]`;
      const key = sha256(text);
      return { key, inputKey: key, inputs: text };
    }
    const text = `[${inputs},${ambient.join(',')}]`;
    return { key: sha256(text), inputKey: sha256(`[${inputs}]`), inputs: text };
  }

  /**
   * The parts every task of a role shares in a run, spelled once: the format, the executor
   * (an agent's per task: its role and row choose its settings), the pipeline, the limits,
   * the working folder, and for a model or agent the role's template, its contract, the topic.
   */
  #prefix(attempt: AttemptRequest): Piece {
    const shared = this.#sharedOf(attempt.executor);
    const role = attempt.task.row['role'] ?? '';
    const pipeline = attempt.pipeline ?? 'generic';
    const agent = shared.executor === undefined;
    // The last prefix, when the same parts made it: a run's tasks mostly share one.
    const last = this.#lastPrefix;
    const workdir = attempt.workdir?.mode;
    const topic = attempt.prompt?.topic;
    if (!agent && last !== undefined && last.executor === attempt.executor && last.limits === attempt.limits && last.role === role && last.pipeline === pipeline && last.workdir === workdir && last.topic === topic) {
      return last.prefix;
    }
    const memo = `${pipeline}\u0000${role}\u0000${workdir ?? ''}\u0000${topic ?? ''}\u0000${this.#limitsText(attempt)}`;
    let prefix = agent ? undefined : shared.prefixes.get(memo);
    if (prefix !== undefined) this.#lastPrefix = { executor: attempt.executor, limits: attempt.limits, role, pipeline, workdir, topic, prefix };
    if (prefix === undefined) {
      const pieces = [this.#piece('"format"', kCacheFormat), shared.executor ?? this.#agentExecutor(attempt), this.#piece('"pipeline"', pipeline), this.#limitsPiece(attempt)];
      if (attempt.workdir !== undefined) pieces.push(this.#piece('"workdir"', attempt.workdir.mode));
      const template = this.#templateOf(attempt);
      if (template !== undefined) {
        pieces.push(template.piece, this.#contract(pipeline, role));
        if (template.shows.has('topic')) pieces.push(this.#piece('"topic"', attempt.prompt?.topic ?? ''));
      }
      prefix = pieces.join(',');
      if (!agent) {
        if (shared.prefixes.size > 1000) shared.prefixes.clear();
        shared.prefixes.set(memo, prefix);
      }
    }
    return prefix;
  }

  #templateOf(attempt: AttemptRequest): TemplatePart | undefined {
    const prompts = this.#sharedOf(attempt.executor).prompts;
    return prompts === undefined ? undefined : this.#template(prompts, attempt.pipeline ?? 'generic', attempt.task.row['role'] ?? '');
  }

  /** The file of the template a task of `role` is rendered from, as words show it; undefined for an executor without one. */
  templateLabel(executor: ExecutorSpec, pipeline: string, role: string): string | undefined {
    const prompts = this.#sharedOf(executor).prompts;
    return prompts === undefined ? undefined : this.#template(prompts, pipeline, role).label;
  }

  /** A part given by its name as JSON text and its value, scrubbed of the environment's secrets. */
  #piece(jsonName: string, value: string): Piece {
    return `[${jsonName},${JSON.stringify(this.#scrubber.text(value))}]`;
  }

  /**
   * The row's input columns sorted by name. A run's rows list their columns in one order:
   * the last order seen is sorted once, and a row in the same order reuses it.
   */
  #sortedColumns(row: Readonly<Record<string, string>>): readonly string[] {
    const seen = this.#columns.seen;
    let index = 0;
    let same = true;
    for (const name in row) {
      if (seen[index] !== name) {
        same = false;
        break;
      }
      index++;
    }
    if (same && index === seen.length) return this.#columns.sorted;
    const names = Object.keys(row);
    this.#columns = { seen: names, sorted: names.filter((name) => !kNotInputCells.has(name)).sort() };
    return this.#columns.sorted;
  }

  #cellName(column: string): string {
    let name = this.#cellNames.get(column);
    if (name === undefined) {
      name = `cell:${column}`;
      if (this.#cellNames.size > 10_000) this.#cellNames.clear();
      this.#cellNames.set(column, name);
    }
    return name;
  }

  #sharedOf(executor: ExecutorSpec): SharedParts {
    let shared = this.#shared.get(executor);
    if (shared === undefined) {
      const agent = isAgentKind(executor.type);
      const promptsDir = (executor as { promptsDir?: string }).promptsDir;
      shared = {
        executor: agent ? undefined : this.#piece('"executor"', executorText(executor)),
        prefixes: new Map(),
        ...(executor.type === 'openai' || agent ? { prompts: new RolePrompts(promptsDir) } : {}),
      };
      this.#shared.set(executor, shared);
    }
    return shared;
  }

  /** An agent task's settings: the run's, its role's entry, then its row's cells (agentSettingsFor). */
  #agentExecutor(attempt: AttemptRequest): Piece {
    const spec = attempt.executor as AgentSpec;
    const settings = agentSettingsFor(baseAgentSettings(spec), spec.roles, agentRowCells(attempt.task.row));
    return this.#piece(
      '"executor"',
      canonicalJson({
        type: settings.agent,
        model: settings.model,
        base_url: settings.baseUrl === undefined ? null : withoutCredentials(settings.baseUrl),
        sandbox: settings.sandbox ?? null,
        max_turns: settings.maxTurns ?? null,
        allowed_tools: settings.allowedTools ?? null,
        effort: settings.effort ?? null,
        args: settings.args ?? null,
      }),
    );
  }

  #template(prompts: RolePrompts, pipeline: string, role: string): TemplatePart {
    const memo = `${pipeline}\u0000${role}`;
    let part = this.#templates.get(memo);
    if (part === undefined) {
      try {
        const { path, builtIn, text } = prompts.source(pipeline, role);
        const shows = new Set<string>();
        for (const match of text.matchAll(kPlaceholder)) if (match[1] !== undefined) shows.add(match[1]);
        const label = builtIn ? `prompts/${basename(dirname(path))}/${basename(path)}` : path;
        part = { label, piece: this.#piece('"template"', sha256(text)), shows };
      } catch {
        // No template: the task fails when it runs; its key says so.
        part = { label: `(no template for role ${role})`, piece: this.#piece('"template"', ''), shows: new Set() };
      }
      this.#templates.set(memo, part);
    }
    return part;
  }

  /** The answer contract of a role: the system prompt and the JSON Schema of its answer, by their SHA-256. */
  #contract(pipeline: string, role: string): Piece {
    const memo = `${pipeline}\u0000${role}`;
    let piece = this.#contracts.get(memo);
    if (piece === undefined) {
      piece = this.#piece('"contract"', sha256(`${systemPrompt(pipeline)}\n${canonicalJson(answerSchema(pipeline, role))}`));
      this.#contracts.set(memo, piece);
    }
    return piece;
  }

  /** A dependency as the task receives it, without what changes with time or host (the discovery file's timestamp and worker). */
  #depText(dep: UpstreamTask): string {
    // Most dependencies of a batch: no discovery file, no artifact, no worktree (canonicalJson's output, spelled out).
    if (dep.discovery === null && dep.artifacts.length === 0 && dep.changes === undefined) {
      return `{"artifacts":[],"discovery":null,"findings":${JSON.stringify(dep.findings)},"status":${JSON.stringify(dep.status)}}`;
    }
    let discovery: Record<string, unknown> | null = null;
    if (dep.discovery !== null) {
      const { timestamp: _timestamp, worker: _worker, ...kept } = dep.discovery;
      discovery = kept;
    }
    return canonicalJson({
      status: dep.status,
      findings: dep.findings,
      discovery,
      artifacts: dep.artifacts.map((path) => [path, this.#artifactHash(path)]),
      changes: dep.changes,
    });
  }

  #artifactHash(path: string): string {
    let hash = this.#artifacts.get(path);
    if (hash === undefined) {
      try {
        hash = sha256(readFileSync(sessionPathForRead(this.#setup.sessionDir, path)));
      } catch {
        hash = 'unreadable';
      }
      if (this.#artifacts.size > 10_000) this.#artifacts.clear();
      this.#artifacts.set(path, hash);
    }
    return hash;
  }

  #limitsPiece(attempt: AttemptRequest): Piece {
    return this.#piece('"limits"', this.#limitsText(attempt));
  }

  /** The limits as text, once per limits object (a run's requests share one). */
  #limitsText(attempt: AttemptRequest): string {
    const limits = attempt.limits;
    if (limits === undefined) return limitsText(attempt);
    let text = this.#limitsTexts.get(limits);
    if (text === undefined) {
      text = limitsText(attempt);
      this.#limitsTexts.set(limits, text);
    }
    return text;
  }
}

/** The executor's settings without secrets, in canonical JSON: what decides how a task is run (not an agent's: per task). */
function executorText(executor: ExecutorSpec): string {
  switch (executor.type) {
    case 'command':
      return canonicalJson({ type: 'command', template: executor.template, output: executor.output ?? 'auto' });
    case 'module':
      return canonicalJson({ type: 'module', module_sha256: fileHash(executor.path) });
    case 'openai':
      return canonicalJson({
        type: 'openai',
        model: executor.model,
        base_url: withoutCredentials(executor.baseUrl ?? process.env['OPENAI_BASE_URL'] ?? kOfficialBaseUrl),
        max_tokens: executor.maxTokens ?? null,
        context_window: executor.contextWindow ?? null,
      });
    default:
      return '';
  }
}

/** The output caps of an attempt, every default filled in, in canonical JSON. */
function limitsText(attempt: AttemptRequest): string {
  const limits = attempt.limits ?? {};
  return canonicalJson({
    max_stdout_bytes: limits.maxStdoutBytes ?? kRunDefaults.maxStdoutBytes,
    max_artifacts_per_task: limits.maxArtifactsPerTask ?? kRunDefaults.maxArtifactsPerTask,
    max_artifact_bytes: limits.maxArtifactBytes ?? kRunDefaults.maxArtifactBytes,
  });
}

/** The SHA-256 of a file's bytes, or `unreadable` (the task fails when it runs). */
function fileHash(path: string): string {
  try {
    return sha256(readFileSync(path));
  } catch {
    return 'unreadable';
  }
}

/** A URL without the user and password it may carry: they are credentials, never in a key. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}
