import { splitList } from '../core/id-list.js';
import { statusOf } from '../core/skip-cause.js';
import type { TaskRow } from '../core/task.js';
import type { AttemptLine } from '../schema/attempt.js';
import { keysNow, type KeyRun, type KeySession } from './session-keys.js';
import { inputsOf, kAmbientParts, KeyMaker } from './task-key.js';
import type { CacheStore } from './cache-store.js';

/** The key a completed result was made (or found) with, as its attempts.ndjson line recorded it. */
export interface RecordedKey {
  key: string;
  /** The key without the ambient parts (`input_key`, else the key). */
  inputKey: string;
  /** ISO 8601: when that attempt ended. */
  end: string;
  cached: boolean;
}

/** The key of each task's latest completed attempt that recorded one. */
export function recordedKeys(lines: readonly AttemptLine[]): Map<string, RecordedKey> {
  const latest = new Map<string, RecordedKey | undefined>();
  for (const line of lines) {
    if (line.outcome !== 'completed') continue;
    // A later completion without a key (an interactive task, a worktree task) replaces an older one with it.
    latest.set(line.task, line.key === undefined ? undefined : { key: line.key, inputKey: line.input_key ?? line.key, end: line.end, cached: line.cached === true });
  }
  const out = new Map<string, RecordedKey>();
  for (const [task, key] of latest) if (key !== undefined) out.set(task, key);
  return out;
}

/** A completed task whose inputs changed since its result was made, and what changed, in words. */
export interface StaleTask {
  id: string;
  changes: string[];
}

/** What is said of a stale task whose cache entry (which holds its inputs then) is gone. */
const kInputsChanged = 'its inputs changed (what they were is in its cache entry, which is gone: the run had --no-cache, --cache read or "cache": false, or the cache was cleared)';

/**
 * The stale tasks of a session (docs/cache.md, "Stale tasks"): completed ones whose key,
 * computed now, differs from the key their result was made with, in a part other than the
 * discoveries board's and wisdom's digests (they change whenever any later task finishes):
 * their input keys differ. In file order, each with what changed, from the inputs its cache
 * entry holds (`store`). A task whose result recorded no key (made before the cache,
 * interactive, in a worktree) is never stale.
 */
export function staleTasks(session: KeySession, run: KeyRun, recorded: ReadonlyMap<string, RecordedKey>, store?: CacheStore): StaleTask[] {
  const completed = session.rows.filter((row) => statusOf(row) === 'completed' && recorded.has(row.id));
  if (completed.length === 0) return [];
  // Staleness compares input keys: no board or wisdom is read for each task.
  const now = keysNow(session, run, completed.map((row) => row.id), { inputKeysOnly: true });
  const labels = new KeyMaker({ sessionDir: session.dir, lookup: () => undefined });
  const stale: StaleTask[] = [];
  for (const row of completed) {
    const key = now.get(row.id);
    if (key === undefined || 'uncacheable' in key) continue;
    const before = recorded.get(row.id)!;
    if (before.inputKey === key.inputKey) continue;
    const entry = store?.has(before.key) === true ? store.read(before.key) : undefined;
    const changes =
      entry === undefined ? [] : changedWords(pairsToMap(entry.inputs), inputsOf(key.inputs), row, (role) => labels.templateLabel(run.executor, session.pipeline, role));
    stale.push({ id: row.id, changes: changes.length > 0 ? changes : [kInputsChanged] });
  }
  return stale;
}

function pairsToMap(pairs: readonly (readonly [string, string])[]): Map<string, string> {
  return new Map(pairs.filter((pair) => Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string').map(([name, value]) => [name, value]));
}

/** The order words come in: what changes everything first, then the row, then what it got from upstream. */
const kRank: Record<string, number> = { format: 0, executor: 1, pipeline: 2, workdir: 3, limits: 4, template: 5, contract: 6, topic: 7 };

/**
 * What changed between the parts a result was made with and the parts now, in words:
 * `description changed`, `prev_context changed because IDEA-002's findings changed`,
 * `the template prompts/brainstorm/ideator.md changed`, `the executor changed`. Ambient
 * parts (the board's and wisdom's digests) are left out.
 */
export function changedWords(before: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>, row: TaskRow, templateLabel: (role: string) => string | undefined): string[] {
  const names = new Set([...before.keys(), ...now.keys()]);
  const changed = [...names].filter((name) => !kAmbientParts.has(name) && before.get(name) !== now.get(name));
  const changedSet = new Set(changed);
  const sources = splitList(row.context_from).filter((id) => changedSet.has(`ctx:${id}`));
  const rank = (name: string) => kRank[name] ?? (name.startsWith('cell:') ? 10 : name === 'prev_context' ? 20 : name.startsWith('dep:') ? 30 : 40);
  const words: string[] = [];
  for (const name of changed.sort((a, b) => rank(a) - rank(b))) {
    const word = partWords(name, row, sources, templateLabel, !before.has(name), !now.has(name));
    if (word !== undefined) words.push(word);
  }
  return words;
}
function partWords(
  name: string,
  row: TaskRow,
  sources: readonly string[],
  templateLabel: (role: string) => string | undefined,
  added: boolean,
  removed: boolean,
): string | undefined {
  switch (name) {
    case 'format':
      return "csv-wave's cache format changed";
    case 'executor':
      return 'the executor changed';
    case 'pipeline':
      return 'the pipeline changed';
    case 'workdir':
      return 'the working folder (--workdir) changed';
    case 'limits':
      return 'the output limits changed';
    case 'template':
      return `the template ${templateLabel(row.role) ?? ''} changed`.replace('  ', ' ');
    case 'contract':
      return `the answer contract of role ${row.role} changed`;
    case 'topic':
      return 'the topic changed';
    case 'warnings':
      return "the missing artifacts of its dependencies changed";
    case 'prev_context': {
      if (sources.length === 0) return 'prev_context changed';
      if (sources.length === 1) return `prev_context changed because ${sources[0]}'s findings changed`;
      return `prev_context changed because the findings of ${sources.join(', ')} changed`;
    }
  }
  if (name.startsWith('cell:')) {
    const cell = name.slice('cell:'.length);
    return added ? `${cell} was filled` : removed ? `${cell} was emptied` : `${cell} changed`;
  }
  if (name.startsWith('dep:')) {
    const dep = name.slice('dep:'.length);
    // A dependency added or dropped is the deps cell's change; findings already told are not told twice.
    if (added || removed || sources.includes(dep)) return undefined;
    return `${dep}'s result changed`;
  }
  // ctx:<id> is told with prev_context.
  return undefined;
}
