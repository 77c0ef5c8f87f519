import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { splitList } from '../core/id-list.js';
import { agentRowCells, agentSettingsFor, baseAgentSettings, isAgentKind, type AgentSpec } from '../executors/agents/settings.js';
import type { AttemptRequest, ExecutorSpec } from '../executors/messages.js';
import { answerSchema } from '../executors/openai/contract-schema.js';
import { kSystemPrompt, RolePrompts } from '../executors/openai/prompt.js';
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

/** A task's input key (docs/cache.md). */
export interface TaskKey {
  /** SHA-256 over the canonical JSON of `parts`: the cache entry's name. */
  key: string;
  /** Each named input part's SHA-256, by name: `format`, `executor`, `cell:description`, `dep:A`, … */
  parts: Record<string, string>;
}

/** A task whose result the cache never holds, and why (for `explain` and the docs). */
export interface Uncacheable {
  uncacheable: string;
}

/** The short form of a part's hash that attempts.ndjson records. */
export function shortHash(hash: string): string {
  return hash.slice(0, 8);
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

/** What the executors of one run share: memoized parts and the template of each role. */
interface SharedParts {
  executor: string;
  /** Model and agent executors: the role's template, read once per role. */
  prompts?: RolePrompts;
}

/** A role's template as the key sees it. */
interface TemplatePart {
  label: string;
  hash: string;
  /** The placeholders it fills: only those of the prompt context it shows are in the key. */
  shows: ReadonlySet<string>;
}

const kPlaceholder = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g;

/**
 * Computes the input key of a task's attempt from the AttemptRequest the run sends (so that
 * the key covers exactly what the executor gets): the run's, or the one status builds
 * offline from the session folder (session-keys.ts). Every part is a text, scrubbed of the
 * environment's secrets, then hashed; the key is the SHA-256 of the parts' names and hashes
 * in canonical JSON. What is shared by the run's tasks (the executor, each role's template
 * and contract, the limits) is hashed once. docs/cache.md gives the exact definition.
 */
export class KeyMaker {
  readonly #setup: KeySetup;
  readonly #scrubber: SecretScrubber;
  readonly #shared = new WeakMap<ExecutorSpec, SharedParts>();
  /** Hashes of texts that every task of a run shares (the format, a pipeline's name, limits, a topic). */
  readonly #texts = new Map<string, string>();
  readonly #templates = new Map<string, TemplatePart>();
  readonly #contracts = new Map<string, string>();
  /** Artifact contents by path: a dependency's files do not change while its dependents run. */
  readonly #artifacts = new Map<string, string>();
  readonly #agentExecutors = new Map<string, string>();
  /** The limits' hash by the run's limits object, which every request of a run shares. */
  readonly #limits = new WeakMap<object, string>();

  constructor(setup: KeySetup) {
    this.#setup = setup;
    this.#scrubber = setup.scrubber ?? SecretScrubber.fromEnv();
  }

  /** The attempt's key, or why the cache never holds its result. */
  keyOf(attempt: AttemptRequest): TaskKey | Uncacheable {
    if (attempt.workdir?.mode === 'worktree') {
      return { uncacheable: 'it works in a git worktree (--workdir worktree): its result is a commit on its branch, which the cache does not hold' };
    }
    const { task } = attempt;
    const parts: Record<string, string> = {};
    const shared = this.#sharedOf(attempt.executor);
    const pipeline = attempt.pipeline ?? 'generic';
    parts['format'] = this.#textHash(kCacheFormat);
    parts['executor'] = isAgentKind(attempt.executor.type) ? this.#agentExecutor(attempt) : shared.executor;
    parts['pipeline'] = this.#textHash(pipeline);
    parts['limits'] = this.#limitsHash(attempt);
    if (attempt.workdir !== undefined) parts['workdir'] = this.#textHash(attempt.workdir.mode);
    const row = task.row;
    for (const name in row) {
      const value = row[name]!;
      if (value !== '' && !kNotInputCells.has(name)) parts[`cell:${name}`] = this.#hash(value);
    }
    parts['prev_context'] = this.#hash(task.prev_context);
    const contextFrom = row['context_from'];
    if (contextFrom !== undefined && contextFrom !== '') {
      for (const id of splitList(contextFrom)) {
        const source = this.#setup.lookup(id);
        parts[`ctx:${id}`] = this.#hash(source?.status === 'completed' ? source.findings : '');
      }
    }
    for (const dep of task.upstream.deps) parts[`dep:${dep.id}`] = this.#hash(this.#depText(dep));
    if (task.upstream.warnings.length > 0) parts['warnings'] = this.#hash(canonicalJson(task.upstream.warnings));
    if (shared.prompts !== undefined) {
      const role = row['role'] ?? '';
      const template = this.#template(shared.prompts, pipeline, role);
      parts['template'] = template.hash;
      parts['contract'] = this.#contract(pipeline, role);
      const prompt = attempt.prompt;
      if (template.shows.has('topic')) parts['topic'] = this.#textHash(prompt?.topic ?? '');
      if (template.shows.has('discoveries')) parts['discoveries'] = this.#hash(prompt?.discoveries ?? '');
      if (template.shows.has('wisdom')) parts['wisdom'] = this.#hash(prompt?.wisdom ?? '');
    }
    return { key: sha256(canonicalJson(parts)), parts };
  }

  /** The file of the template a task of `role` is rendered from, as words show it; undefined for an executor without one. */
  templateLabel(executor: ExecutorSpec, pipeline: string, role: string): string | undefined {
    const prompts = this.#sharedOf(executor).prompts;
    return prompts === undefined ? undefined : this.#template(prompts, pipeline, role).label;
  }

  #sharedOf(executor: ExecutorSpec): SharedParts {
    let shared = this.#shared.get(executor);
    if (shared === undefined) {
      const usesPrompts = executor.type === 'openai' || isAgentKind(executor.type);
      const promptsDir = (executor as { promptsDir?: string }).promptsDir;
      shared = {
        executor: usesPrompts && executor.type !== 'openai' ? '' : this.#hash(this.#executorText(executor)),
        ...(usesPrompts ? { prompts: new RolePrompts(promptsDir) } : {}),
      };
      this.#shared.set(executor, shared);
    }
    return shared;
  }

  /** The executor's settings without secrets, in canonical JSON: what decides how the task is run. */
  #executorText(executor: ExecutorSpec): string {
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

  /** An agent task's settings: the run's, its role's entry, then its row's cells (agentSettingsFor). */
  #agentExecutor(attempt: AttemptRequest): string {
    const spec = attempt.executor as AgentSpec;
    const settings = agentSettingsFor(baseAgentSettings(spec), spec.roles, agentRowCells(attempt.task.row));
    const text = canonicalJson({
      type: settings.agent,
      model: settings.model,
      base_url: settings.baseUrl === undefined ? null : withoutCredentials(settings.baseUrl),
      sandbox: settings.sandbox ?? null,
      max_turns: settings.maxTurns ?? null,
      allowed_tools: settings.allowedTools ?? null,
      effort: settings.effort ?? null,
      args: settings.args ?? null,
    });
    let hash = this.#agentExecutors.get(text);
    if (hash === undefined) {
      hash = this.#hash(text);
      if (this.#agentExecutors.size > 1000) this.#agentExecutors.clear();
      this.#agentExecutors.set(text, hash);
    }
    return hash;
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
        part = { label, hash: this.#hash(text), shows };
      } catch {
        // No template: the task fails when it runs; its key says so.
        part = { label: `(no template for role ${role})`, hash: this.#hash(''), shows: new Set() };
      }
      this.#templates.set(memo, part);
    }
    return part;
  }

  /** The answer contract of a role: the system prompt and the JSON Schema of its answer. */
  #contract(pipeline: string, role: string): string {
    const memo = `${pipeline}\u0000${role}`;
    let hash = this.#contracts.get(memo);
    if (hash === undefined) {
      hash = this.#hash(`${kSystemPrompt}\n${canonicalJson(answerSchema(pipeline, role))}`);
      this.#contracts.set(memo, hash);
    }
    return hash;
  }

  /** A dependency as the task receives it, without what changes with time or host (the discovery file's timestamp and worker). */
  #depText(dep: UpstreamTask): string {
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

  #limitsHash(attempt: AttemptRequest): string {
    const limits = attempt.limits;
    if (limits === undefined) return this.#textHash(limitsText(attempt));
    let hash = this.#limits.get(limits);
    if (hash === undefined) {
      hash = this.#textHash(limitsText(attempt));
      this.#limits.set(limits, hash);
    }
    return hash;
  }

  /** A part's hash: its text, scrubbed of the environment's secrets, then hashed. */
  #hash(text: string): string {
    return sha256(this.#scrubber.text(text));
  }

  /** `#hash` of a text many tasks share, memoized. */
  #textHash(text: string): string {
    let hash = this.#texts.get(text);
    if (hash === undefined) {
      hash = this.#hash(text);
      if (this.#texts.size > 1000) this.#texts.clear();
      this.#texts.set(text, hash);
    }
    return hash;
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
