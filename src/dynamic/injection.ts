import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { WaveError, formatViolations, type Violation } from '../errors.js';
import { newRow } from '../pipelines/new-row.js';
import type { SettingsFile } from '../pipelines/settings.js';
import type { InjectionRule } from '../schema/session.js';
import { lineOfPath } from '../text/json-error-position.js';
import { isPending, type ChangeBuilder } from './change-builder.js';

/** A task a rule injected, as the run says it: `[INJECT] SECURITY-001 after PLAN-001: keyword "OWASP"`. */
export interface Injection {
  id: string;
  /** `after PLAN-001`, `beside IMPL-*`. */
  placement: string;
  /** `keyword "OWASP"`. */
  reason: string;
}

/**
 * The injection rules of a session, checked against its pipeline: each has one placement
 * (`after` or `beside`), is not triggered by its own task, injects a role the pipeline takes
 * (`roles`, null for any) and an id no other rule injects. Throws WaveError INVALID_SESSION
 * with every problem at its line of session.json (`session.json:14: inject.2.role: …`).
 */
export function checkInjectionRules(rules: readonly InjectionRule[], roles: ReadonlySet<string> | null, pipeline: string, file?: SettingsFile): void {
  const violations: Violation[] = [];
  const ids = new Set<string>();
  const at = (index: number, key: string, message: string) =>
    violations.push({ line: file === undefined ? 1 : lineOfPath(file.text, ['inject', String(index), key]), message: `inject.${index}.${key}: ${message}` });
  rules.forEach((rule, index) => {
    if ((rule.after === undefined) === (rule.beside === undefined)) at(index, 'id', 'give one of after and beside: where the injected task goes');
    if (rule.on === rule.id) at(index, 'on', `${rule.on} is the task this rule injects: a rule fires when another task completes`);
    if (roles !== null && !roles.has(rule.role)) at(index, 'role', `the ${pipeline} pipeline takes ${[...roles].join(', ')}, not ${JSON.stringify(rule.role)}`);
    if (ids.has(rule.id)) at(index, 'id', `another rule injects ${rule.id} already`);
    ids.add(rule.id);
  });
  if (violations.length === 0) return;
  const shown = file?.shown ?? 'session.json';
  violations.sort((a, b) => a.line - b.line);
  throw new WaveError('INVALID_SESSION', formatViolations(shown, violations), { path: shown, violations });
}

/** Whether `id` matches a rule's pattern (`IMPL-*`: `*` stands for any characters). */
function matches(pattern: string, id: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(id);
}

/** The first keyword found in `text` as a whole word or phrase, in any case; undefined when none is. */
function keywordIn(keywords: readonly string[], text: string): string | undefined {
  return keywords.find((keyword) => {
    const escaped = keyword.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
    return new RegExp(`(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`, 'i').test(text);
  });
}

export interface InjectionSetup {
  rules: readonly InjectionRule[];
  topic: string;
  /** What a specialist of each role does, for the description of a task a rule without one injects. */
  work?: Readonly<Record<string, string>>;
  warn: (message: string) => void;
}

/**
 * Dynamic role injection (seed 003): the rules whose `on` is the task that just completed
 * (`findings`: its result's) are evaluated in order. A rule whose keyword appears in the
 * topic or the findings of the tasks it scans appends its task, with the rule in its
 * description: `after` the tasks its pattern names (depending on them), or `beside` them
 * (depending on what they depend on); the tasks that have not started and waited on those
 * wait on it too. A rule whose task is in the session already does nothing (a resume, a
 * rerun), so a rule injects once, and rules whose tasks trigger others stop when every rule fired.
 */
export function inject(builder: ChangeBuilder, finished: TaskRow, findings: string, setup: InjectionSetup): Injection[] {
  const made: Injection[] = [];
  for (const rule of setup.rules) {
    if (rule.on !== finished.id || builder.row(rule.id) !== undefined) continue;
    let keyword: string | undefined;
    let where = '';
    for (const source of rule.scan ?? ['topic', rule.on]) {
      const text = source === 'topic' ? setup.topic : source === finished.id ? findings : completedFindings(builder.row(source));
      keyword = keywordIn(rule.keywords, text);
      if (keyword !== undefined) {
        where = source === 'topic' ? 'the topic' : `the findings of ${source}`;
        break;
      }
    }
    if (keyword === undefined) continue;
    const pattern = rule.after ?? rule.beside!;
    const placement = `${rule.after === undefined ? 'beside' : 'after'} ${pattern}`;
    const anchors = builder.view().filter((row) => row.id !== rule.id && matches(pattern, row.id)).map((row) => row.id);
    if (anchors.length === 0) {
      setup.warn(`injection rule ${rule.id} (keyword "${keyword}" in ${where}): no task matches ${placement}, so nothing is injected`);
      continue;
    }
    const anchorSet = new Set(anchors);
    let deps: string[];
    let context: string[];
    if (rule.after !== undefined) {
      deps = anchors;
      context = anchors;
    } else {
      const rows = anchors.map((id) => builder.row(id)!);
      deps = [...new Set(rows.flatMap((row) => splitList(row.deps)))].filter((id) => !anchorSet.has(id));
      context = [...new Set(rows.flatMap((row) => splitList(row.context_from)))].filter((id) => !anchorSet.has(id));
    }
    const reason = `keyword "${keyword}"`;
    const work = rule.description ?? setup.work?.[rule.role] ?? `Do the ${rule.role} part of "${setup.topic}"`;
    const row = newRow({
      id: rule.id,
      title: rule.title ?? `${rule.role} (injected)`,
      description: `${work}.\n\n[INJECT] ${rule.id} ${placement}: ${reason} in ${where} (rule on ${rule.on}: ${rule.keywords.map((word) => `"${word}"`).join(', ')})`,
      role: rule.role,
      deps: deps.join(';'),
      context_from: context.join(';'),
      priority: rule.priority ?? 'P2',
    });
    builder.add({ add: [row], update: [], skip: [] });
    // What waited on the anchors waits on the injected task too, and reads it.
    for (const waiting of builder.view()) {
      if (waiting.id === row.id || anchorSet.has(waiting.id) || !isPending(waiting)) continue;
      if (splitList(waiting.deps).some((id) => anchorSet.has(id))) builder.wire(waiting.id, row.id, true);
    }
    made.push({ id: rule.id, placement, reason });
  }
  return made;
}

/** A task's findings when it completed, else nothing to scan. */
function completedFindings(row: TaskRow | undefined): string {
  return row?.status === 'completed' ? row.findings : '';
}
