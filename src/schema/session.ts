import { z } from 'zod';
import { kRunOptionTable, runOptionEntries, type OptionValue, type RunOptionName } from '../option-table.js';
import { kPriorities, kTaskIdPattern } from './row.js';

/** The pipelines csv-wave knows (DESIGN.md section 1). */
export const kPipelines = [
  /** ideator → challenger → GC check → revision → synthesizer → evaluator (seed 004). */
  'brainstorm',
  /** explorer → analyst → discussant → synthesizer (seed 002). */
  'analyze',
  /** Any non-empty role: plain batch work. */
  'generic',
  /** analyst → writer → quality gate → planner → (architect → orchestrator →) executor → tester → reviewer (seed 003). */
  'lifecycle',
] as const;
export type PipelineName = (typeof kPipelines)[number];

export { kOutputModes, type OutputMode } from '../option-table.js';

/** session.json's keys for run options, each with the table's type and bounds, optional. */
function runOptionKeys(): Record<string, z.ZodOptional<z.ZodType>> {
  const shape: Record<string, z.ZodOptional<z.ZodType>> = {};
  for (const [, definition] of runOptionEntries()) {
    if (definition.key !== undefined) shape[definition.key] = definition.type.optional().describe(definition.doc);
  }
  return shape;
}

/** The keys `runOptionKeys` adds, typed (the table's types by their session.json names). */
type RunOptionKeys = {
  [K in RunOptionName as NonNullable<(typeof kRunOptionTable)[K]['key']>]?: OptionValue<(typeof kRunOptionTable)[K]>;
};

/** How much a codex agent may do in its working folder (`codex exec -s`). */
export const kCodexSandboxes = ['read-only', 'workspace-write'] as const;
export type CodexSandbox = (typeof kCodexSandboxes)[number];

/** The agent CLIs csv-wave runs per row (issue 24; executors/agents/settings.ts). */
export const kAgentKinds = ['codex', 'claude'] as const;
export type AgentKind = (typeof kAgentKinds)[number];

/** An agent's settings, in the executor block and in a role's entry of `roles`. */
const agentFields = {
  model: z.string().min(1).optional(),
  base_url: z.string().optional(),
  /** codex: what the agent may do in its working folder. @default 'read-only' */
  sandbox: z.enum(kCodexSandboxes).optional(),
  /** claude: `--max-turns`. */
  max_turns: z.number().int().positive().optional(),
  /** claude: `--allowedTools`. @default read-only tools */
  allowed_tools: z.array(z.string().min(1)).optional(),
  /** Reasoning effort: codex `model_reasoning_effort`, claude `--effort`. */
  effort: z.string().min(1).optional(),
  /** More arguments for the CLI, after csv-wave's own. */
  args: z.array(z.string()).optional(),
};

/** A task id, or a pattern of them with `*` (`IMPL-*`): where an injected task goes. */
const kIdGlobPattern = /^[A-Za-z0-9*][A-Za-z0-9._*-]{0,63}$/;
const taskId = (what: string) => z.string().regex(kTaskIdPattern, { error: (issue) => `${what}: ${JSON.stringify(issue.input)} is no task id` });

/** Rules one session may have: each injects one task at most, so injections are bounded too. */
export const kMaxInjectionRules = 100;

/**
 * A rule of dynamic role injection (seed 003): when task `on` completes, the topic and the
 * findings of the tasks in `scan` are searched for `keywords`; a match appends task `id` of
 * `role`, `after` the tasks a pattern names (it depends on them, and what waited on them
 * waits on it too) or `beside` them (it depends on what they depend on, and what waited on
 * them waits on it too). A rule fires once: a session that has its task already is left as
 * it is (a resume, a rerun).
 */
export const injectionRuleSchema = z
  .object({
    id: taskId('id'),
    role: z.string().min(1).max(64),
    on: taskId('on'),
    keywords: z.array(z.string().min(1).max(64)).min(1).max(50),
    /** `topic` and task ids. @default ["topic", <on>] */
    scan: z.array(z.string().min(1).max(64)).max(20).optional(),
    after: z.string().regex(kIdGlobPattern, { error: 'after: a task id, or a pattern of them such as IMPL-*' }).optional(),
    beside: z.string().regex(kIdGlobPattern, { error: 'beside: a task id, or a pattern of them such as IMPL-*' }).optional(),
    title: z.string().max(200).optional(),
    description: z.string().max(4000).optional(),
    /** @default P2, the seed's "optional enhancements" */
    priority: z.enum(kPriorities).optional(),
  })
  .strict();
export type InjectionRule = z.output<typeof injectionRuleSchema>;

/**
 * session.json: written by `init`, optional. A session that names no pipeline (here or with
 * `--pipeline`) is brainstorm when all its roles are brainstorm roles, else generic: one rule,
 * in session/session.ts settlePipeline. The run options' keys come from the table
 * (option-table.ts), with its bounds.
 */
export const sessionConfigSchema = z
  .object({
    pipeline: z.enum(kPipelines).optional(),
    topic: z.string().optional(),
    mode: z.string().optional(),
    max_gc_rounds: z.number().int().min(0).optional(),
    /** Dynamic role injection rules (seed 003); the lifecycle pipeline has the seed's table when absent, `[]` for none. */
    inject: z.array(injectionRuleSchema).max(kMaxInjectionRules).optional(),
    /** Roles whose tasks validate their dependencies' artifacts: they start while those wait for validation. @default the pipeline's (lifecycle: reviewer, tester) */
    validator_roles: z.array(z.string().min(1).max(64)).max(50).optional(),
    /** Fix rounds a task's failed artifacts get before what waits on them is blocked. @default 2 */
    max_fix_rounds: z.number().int().min(0).max(20).optional(),
    /** lifecycle: the score (0 to 100) every quality dimension must reach for `--auto` to resume. @default 70 */
    quality_threshold: z.number().min(0).max(100).optional(),
    /** lifecycle: quality checks before the gate resumes without asking. @default 3 */
    max_quality_rounds: z.number().int().min(1).max(20).optional(),
    executor: z
      .object({
        type: z.enum(['command', 'module', 'openai', ...kAgentKinds]),
        cmd: z.string().optional(),
        module: z.string().optional(),
        ...agentFields,
      })
      .strict()
      .optional(),
    /**
     * Per role: agent settings that win over the executor block's (a row's `agent`, `model`,
     * `effort` cells win over both), and, for any executor, `cache: false`: the role's tasks
     * always execute (docs/cache.md).
     */
    roles: z
      .record(
        z.string().min(1),
        z.object({ agent: z.enum(kAgentKinds).optional(), ...agentFields, cache: z.boolean().optional() }).strict(),
      )
      .optional(),
    /**
     * The result cache's folder, when not the session's own `.csv-wave/cache/`: a folder
     * several sessions share (a relative path is relative to the session folder).
     */
    cache_dir: z.string().min(1).optional(),
    /** Most task rows tasks.csv may hold; a file with more is refused, never cut (default 1,000,000). */
    max_rows: z.number().int().positive().optional(),
    /** Where tasks run: `local` (default), or `bullmq` with the Redis `url` (else CSV_WAVE_REDIS_URL); `--backend` wins. */
    backend: z
      .object({
        type: z.enum(['local', 'bullmq']),
        url: z.string().optional(),
        /** With bullmq: attempts started across all workers, `N/s` or `N/min` (`--rate` wins). */
        rate: z.string().optional(),
      })
      .strict()
      .optional(),
    /**
     * Prices by model name, in US dollars per million tokens: `input`, `output`, optional
     * `cached_input` (prompt tokens served from the server's cache; `input` when absent) and
     * `batch_discount` (the fraction the Batch API takes off, 0.5 for half price).
     */
    pricing: z
      .record(
        z.string().min(1),
        z
          .object({
            input: z.number().min(0),
            output: z.number().min(0),
            cached_input: z.number().min(0).optional(),
            batch_discount: z.number().min(0).max(1).optional(),
          })
          .strict(),
      )
      .optional(),
    ...runOptionKeys(),
  })
  .strict();

export type SessionConfig = Omit<z.output<typeof sessionConfigSchema>, keyof RunOptionKeys> & RunOptionKeys;
