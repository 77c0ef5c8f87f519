import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gateOf, type GateChange, type GateState } from '../../core/gates.js';
import { WaveError, formatViolations, type Violation } from '../../errors.js';
import { sessionPathForRead } from '../../files/session-path.js';
import { kLayout, type SessionFileWriter } from '../../layout.js';
import {
  artifactRegistrySchema,
  manifestPathProblem,
  type ArtifactManifest,
  type ArtifactValidation,
  type RegistryEntry,
} from '../../schema/artifact-manifest.js';
import { lineOfPath } from '../../text/json-error-position.js';
import { readJsonFile } from './json-file.js';

/** The most bytes artifact-registry.json may have (100,000 artifacts of a few hundred bytes fit). */
const kMaxRegistryBytes = 64 * 1024 * 1024;

/** The task a reply is for, as the registry needs it. */
export interface ContractTask {
  id: string;
  role: string;
  priority: string;
}

/** What a reply would change in the registry: the new entries, and the gates of the tasks it touched. */
export interface RegistryPlan {
  readonly entries: ReadonlyMap<string, RegistryEntry>;
  /** The gate of every task whose artifacts the reply made, replaced or validated (core/gates.ts). */
  readonly gates: GateChange[];
  /** The artifacts the reply failed, each with its summary: what a fix round is for. */
  readonly failed: RegistryEntry[];
}

/**
 * The session's artifact registry (seed 003's artifact-registry.json): the latest manifest of
 * every artifact a task made, with its validation status. The engine alone writes it, on its
 * main thread, before the finish of the task whose result changed it (so a kill in between
 * runs that task again, and its result changes it again the same way). It is read back, and
 * checked as hostile input, at a run's start: a copied or hand-edited file is refused naming
 * its line. Every path is relative to the session folder, so a copied session works in its copy.
 */
export class ArtifactRegistry {
  #entries: ReadonlyMap<string, RegistryEntry>;

  private constructor(entries: ReadonlyMap<string, RegistryEntry>) {
    this.#entries = entries;
  }

  /** An empty registry (a session whose tasks made no artifact yet). */
  static empty(): ArtifactRegistry {
    return new ArtifactRegistry(new Map());
  }

  /**
   * The session's registry, checked: JSON of the schema, each path inside the session folder
   * (through symlinks too), each artifact once. Throws WaveError INVALID_SESSION with every
   * problem at its line (`artifact-registry.json:12: artifacts.1.path: …`).
   */
  static load(sessionDir: string): ArtifactRegistry {
    const path = join(sessionDir, kLayout.artifactRegistry);
    if (!existsSync(path)) return ArtifactRegistry.empty();
    // As the person would type it: relative to the working folder when inside it.
    const fromHere = relative(process.cwd(), path);
    const shown = fromHere === '' || fromHere.startsWith('..') ? path : fromHere;
    const { value, text } = readJsonFile(path, shown, 'INVALID_SESSION', kMaxRegistryBytes);
    const refuse = (violations: Violation[]): never => {
      violations.sort((a, b) => a.line - b.line);
      const hint = `\n${shown} is the engine's record of the session's artifacts: put back the file a run wrote, or delete it (the artifacts' tasks then hold nothing back)`;
      throw new WaveError('INVALID_SESSION', formatViolations(shown, violations) + hint, { path: shown, violations });
    };
    const parsed = artifactRegistrySchema.safeParse(value);
    if (!parsed.success) {
      refuse(
        parsed.error.issues.map((issue) => {
          const where = issue.path.map(String);
          // An unknown key is found at its own line, not at its object's.
          const at = issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined ? [...where, issue.keys[0]] : where;
          return { line: at.length === 0 ? 1 : lineOfPath(text, at), message: `${where.join('.') || '(top level)'}: ${issue.message}` };
        }),
      );
    }
    const entries = new Map<string, RegistryEntry>();
    const violations: Violation[] = [];
    for (const [index, entry] of parsed.data!.artifacts.entries()) {
      const at = ['artifacts', String(index)];
      if (entries.has(entry.artifact_id)) {
        violations.push({ line: lineOfPath(text, [...at, 'artifact_id']), message: `artifacts.${index}: a second entry of artifact ${entry.artifact_id}` });
      }
      const problem = manifestPathProblem(entry.path) ?? outside(sessionDir, entry.path);
      if (problem !== undefined) violations.push({ line: lineOfPath(text, [...at, 'path']), message: `artifacts.${index}.path: ${JSON.stringify(entry.path.slice(0, 80))} ${problem}` });
      entries.set(entry.artifact_id, entry);
    }
    if (violations.length > 0) refuse(violations);
    return new ArtifactRegistry(entries);
  }

  /**
   * Every artifact's latest entry, by artifact id: the file is the same whatever order
   * parallel tasks finished in (both schedules write one registry), and a diff shows one change.
   */
  entries(): RegistryEntry[] {
    return [...this.#entries.values()].sort((a, b) => (a.artifact_id < b.artifact_id ? -1 : a.artifact_id > b.artifact_id ? 1 : 0));
  }

  get(artifactId: string): RegistryEntry | undefined {
    return this.#entries.get(artifactId);
  }

  /** The closed gates (pending or failed) of the tasks that made the artifacts, for the scheduling core at a run's start. */
  closedGates(): Map<string, GateState> {
    const gates = new Map<string, GateState>();
    for (const task of new Set([...this.#entries.values()].map((entry) => entry.metadata.task_id))) {
      const gate = gateOfTask(this.#entries, task);
      if (gate !== 'passed') gates.set(task, gate);
    }
    return gates;
  }

  /** The latest entries of the artifacts these tasks made, in the tasks' order: what a dependent is given in its input. */
  manifestsOf(taskIds: readonly string[]): RegistryEntry[] {
    const wanted = new Set(taskIds);
    if (wanted.size === 0 || this.#entries.size === 0) return [];
    const entries = [...this.#entries.values()].filter((entry) => wanted.has(entry.metadata.task_id));
    const order = new Map(taskIds.map((id, index) => [id, index]));
    return entries.sort((a, b) => order.get(a.metadata.task_id)! - order.get(b.metadata.task_id)!);
  }

  /**
   * What a finished reply of `task` would change: its manifests registered (a new version
   * of an artifact only from the task that holds it or a task downstream of it, a fix or a
   * revision), its verdicts set on artifacts of tasks upstream of it (`upstream`: every task
   * it depends on, directly or not). Returns the problem that refuses the reply otherwise.
   * Changes nothing: `commit` takes the plan once the run accepted the reply.
   */
  plan(
    task: ContractTask,
    contract: { manifests?: readonly ArtifactManifest[] | undefined; validations?: readonly ArtifactValidation[] | undefined },
    upstream: (id: string) => boolean,
    now: string,
  ): RegistryPlan | { problem: string } {
    const entries = new Map(this.#entries);
    const touched = new Set<string>();
    const failed: RegistryEntry[] = [];
    for (const [index, manifest] of (contract.manifests ?? []).entries()) {
      const held = entries.get(manifest.artifact_id);
      const holder = held?.metadata.task_id;
      if (holder !== undefined && holder !== task.id && !upstream(holder)) {
        return {
          problem: `artifact_manifests.${index}: artifact ${manifest.artifact_id} is ${holder}'s, and ${holder} is not upstream of ${task.id}: give the artifact another id`,
        };
      }
      if (holder !== undefined) touched.add(holder);
      touched.add(task.id);
      const entry: RegistryEntry = {
        artifact_id: manifest.artifact_id,
        creator_role: manifest.creator_role ?? task.role,
        artifact_type: manifest.artifact_type,
        version: manifest.version ?? '1',
        path: manifest.path,
        dependencies: manifest.dependencies ?? [],
        validation_status: manifest.validation_status,
        validation_summary: manifest.validation_summary ?? '',
        metadata: {
          created_at: manifest.metadata?.created_at ?? now,
          task_id: task.id,
          priority: (manifest.metadata?.priority ?? task.priority) as RegistryEntry['metadata']['priority'],
        },
      };
      entries.set(entry.artifact_id, entry);
      if (entry.validation_status === 'failed') failed.push(entry);
    }
    const own = new Set((contract.manifests ?? []).map((manifest) => manifest.artifact_id));
    for (const [index, validation] of (contract.validations ?? []).entries()) {
      const at = `artifact_validations.${index}`;
      if (own.has(validation.artifact_id)) return { problem: `${at}: artifact ${validation.artifact_id} is this task's own: its manifest's validation_status says where it stands` };
      const entry = entries.get(validation.artifact_id);
      if (entry === undefined) {
        const known = [...entries.keys()].slice(0, 10).join(', ');
        return { problem: `${at}: no artifact ${validation.artifact_id} in ${kLayout.artifactRegistry} (it holds ${known === '' ? 'none' : known})` };
      }
      const holder = entry.metadata.task_id;
      if (!upstream(holder)) return { problem: `${at}: artifact ${validation.artifact_id} is ${holder}'s, which is not upstream of ${task.id}` };
      const validated: RegistryEntry = {
        ...entry,
        validation_status: validation.validation_status,
        validation_summary: validation.validation_summary ?? '',
        validated_by: task.id,
      };
      entries.set(validated.artifact_id, validated);
      touched.add(holder);
      if (validated.validation_status === 'failed') failed.push(validated);
    }
    const gates = [...touched].map((id) => ({ id, gate: gateOfTask(entries, id) }));
    return { entries, gates, failed };
  }

  /** Takes a plan the run accepted (see `plan`), in memory; `write` puts it in the file. */
  commit(plan: RegistryPlan): void {
    this.#entries = plan.entries;
  }

  /** Writes artifact-registry.json whole, by a rename: a reader never sees half of it. */
  write(files: SessionFileWriter): void {
    files.replace(kLayout.artifactRegistry, `${JSON.stringify({ version: 1, artifacts: this.entries() }, null, 2)}\n`);
  }
}

/** The gate of one task: the statuses of the artifacts whose latest version it made. */
function gateOfTask(entries: ReadonlyMap<string, RegistryEntry>, task: string): GateState {
  const statuses: string[] = [];
  for (const entry of entries.values()) if (entry.metadata.task_id === task) statuses.push(entry.validation_status);
  return gateOf(statuses);
}

/** Why a path leads out of the session folder through a symlink, or undefined. */
function outside(sessionDir: string, path: string): string | undefined {
  try {
    sessionPathForRead(sessionDir, path);
    return undefined;
  } catch (error) {
    return `leads out of the session folder (${(error as Error).message})`;
  }
}
