import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PromptContext } from '../../knowledge/prompt-context.js';
import type { TaskInput } from '../types.js';
import { findRoleRules } from '../../roles/role-rules.js';

/** The built-in templates: a top-level folder, so the same URL works from src/ and dist/. */
const kBuiltInPrompts = fileURLToPath(new URL('../../../prompts/', import.meta.url));
/** Names a pipeline or role may have to be used in a template path. */
const kPathNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/**
 * The output contract of every role of the brainstorm, analyze and generic pipelines; the
 * role's template says what to put in it. A pipeline with artifact contracts and routes
 * (lifecycle) adds their fields (systemPrompt): the others' prompts stay as short as before.
 */
export const kSystemPrompt = `You are one worker in a csv-wave pipeline: a batch of tasks run in dependency waves. Your answer is stored as the result of your task and shown to the tasks that come after it.

Answer with exactly one JSON object and nothing else: no prose around it, no code fences. Its fields:
- "id": the task id you are given.
- "status": "completed", or "failed" when the task cannot be done; then say why in "error".
- "findings": the result in at most 500 characters. Later tasks see this first, so make it a summary that stands on its own.
- "artifacts": optional list of objects with "name" (letters, digits, ".", "-", "_"; at most 64 characters, no extension needed) and "content" (markdown): the full output. Use them for anything longer than the findings.
- "discoveries": optional list of objects with "type" and "data" (an object): facts shared with every later task. Use the types and data fields your role instructions name.
- "key_findings": optional, at most 5 strings of under 100 characters each.
- "decisions": optional list of decisions, each with its reason.
- "wisdom": optional object with lists "learnings", "decisions", "conventions", "issues": lessons later tasks should know.
- "verification": optional, "self-validated".
- "gc_signal" and "severity_summary": only when your role instructions ask for them.
- "supervision_verdict" and "supervision_score": only when your role instructions make your task a checkpoint.
No other fields.`;

/** The contract's fields of a pipeline with artifact contracts and routes (RoleRules.contracts). */
const kContractLines = `- "route": only when your role instructions ask you to choose a branch (a planner's complexity route).
- "artifact_manifests": optional list, one per artifact you made, with "artifact_id" (letters, digits, ".", "-", "_"), "artifact_type", "path" (relative to the session folder, such as artifacts/<id>/<name>.md), "version", "dependencies" (artifact ids) and "validation_status" ("pending", "passed" or "failed"), as your role instructions say.
- "artifact_validations": optional list of verdicts on artifacts of the tasks before yours, each with "artifact_id", "validation_status" ("passed" or "failed") and "validation_summary", when your role instructions make you a validator.
`;

/** The system prompt of a role of `pipeline`: kSystemPrompt, with the contract fields where the pipeline's answers carry them. */
export function systemPrompt(pipeline: string): string {
  if (findRoleRules(pipeline)?.contracts !== true) return kSystemPrompt;
  return kSystemPrompt.replace('- "supervision_verdict"', `${kContractLines}- "supervision_verdict"`);
}

/**
 * A task's user prompt: the role's template of the session's pipeline, filled with the row,
 * prev_context, the topic, the dependencies' outputs and the digests of the prompt context.
 * Templates are read once per executor; only the prompt context tells about the session.
 */
export class RolePrompts {
  readonly #roots: readonly string[];
  readonly #templates = new Map<string, string | null>();

  /** `promptsDir`: a folder of `<pipeline>/<role>.md` looked at before the built-in one. */
  constructor(promptsDir: string | undefined) {
    this.#roots = [...(promptsDir === undefined ? [] : [resolve(promptsDir)]), kBuiltInPrompts];
  }

  /** Throws when neither folder has the role's template nor a default one. */
  render(task: TaskInput, context: PromptContext): string {
    const pipeline = promptPipeline(context.pipeline);
    const template = this.source(context.pipeline, task.row.role ?? '').text;
    const orNone = (text: string) => (text.trim() === '' ? '(none)' : text);
    return renderPrompt(template, {
      ...task.row,
      id: task.id,
      pipeline,
      topic: context.topic.trim() === '' ? '(no topic given: see the task description)' : context.topic,
      prev_context: orNone(task.prev_context),
      discoveries: orNone(context.discoveries),
      upstream: orNone(context.upstream),
      wisdom: orNone(context.wisdom),
    });
  }

  /**
   * The template a task of `role` in `pipeline` is rendered from, and the file it was read
   * from: the role's own, else the default; the given folder before the built-in one.
   * Throws when there is none. The result cache's key hashes it (cache/key-parts.ts).
   */
  source(pipelineName: string, role: string): { path: string; builtIn: boolean; text: string } {
    const pipeline = promptPipeline(pipelineName);
    const candidates: string[] = [];
    if (kPathNamePattern.test(role)) {
      for (const root of this.#roots) candidates.push(join(root, pipeline, `${role}.md`));
    }
    for (const root of this.#roots) candidates.push(join(root, 'generic', 'default.md'));
    for (const path of candidates) {
      let text = this.#templates.get(path);
      if (text === undefined) {
        text = existsSync(path) ? readFileSync(path, 'utf8') : null;
        this.#templates.set(path, text);
      }
      if (text !== null) return { path, builtIn: path.startsWith(kBuiltInPrompts), text };
    }
    throw new Error(`No prompt template for role "${role}" of pipeline ${pipeline}: looked for ${candidates.join(', ')}`);
  }
}

/** A pipeline name that cannot be a folder name finds no template of its own. */
function promptPipeline(pipeline: string): string {
  return kPathNamePattern.test(pipeline) ? pipeline : 'brainstorm';
}

/**
 * Fills a prompt template: `{name}` becomes the value of that name as plain text, `{{` and
 * `}}` are literal braces, and a name without a value stays as written. One pass, so a
 * value that itself contains `{name}` is not expanded again.
 */
export function renderPrompt(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    return Object.hasOwn(values, name!) ? values[name!]! : match;
  });
}
