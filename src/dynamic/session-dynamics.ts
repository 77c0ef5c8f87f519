import type { TaskRow } from '../core/task.js';
import type { WorkerReply } from '../executors/messages.js';
import type { HandlerResult } from '../interactive/types.js';
import { ArtifactRegistry, type RegistryPlan } from '../knowledge/contracts/artifact-registry.js';
import type { SessionFileWriter } from '../layout.js';
import type { RegistryEntry } from '../schema/artifact-manifest.js';
import type { InjectionRule } from '../schema/session.js';
import { ChangeBuilder, upstreamOf } from './change-builder.js';
import { fixRounds, validationWaits } from './fix-rounds.js';
import { inject, type Injection } from './injection.js';
import { kSpecialistWork } from '../pipelines/lifecycle/injection-table.js';

export interface DynamicsSetup {
  /** The session's rows as they stand (the run's table). */
  rows: () => readonly TaskRow[];
  registry: ArtifactRegistry;
  /** The session's writer: artifact-registry.json goes through it. */
  files: SessionFileWriter;
  /** Whether a task validates its dependencies' artifacts (its role is a validator role). */
  validates: (row: TaskRow) => boolean;
  maxFixRounds: number;
  rules: readonly InjectionRule[];
  topic: string;
  /** What a specialist of each role does, for injected tasks without a description. @default the seed's specialists */
  work?: Readonly<Record<string, string>>;
  warn: (message: string) => void;
  /** Told each task a rule injected, once the run took it (`[INJECT] …`). */
  injected: (injection: Injection) => void;
  /** The time a manifest without one is created at. @default now */
  now?: () => string;
}

/**
 * What a task's result changes in the session at run time, besides its own row, for any
 * pipeline (seed 003): its artifacts registered and validated (artifact-registry.json), the
 * gates of the tasks whose artifacts those are, a fix round for artifacts that failed, the
 * validators a task waiting on pending artifacts must wait for, and the specialists its
 * completion injects. `react` makes it all one session change, before the scheduling core
 * takes the result; `finished` records the registry once the core took it, before the
 * task's finish is journaled.
 */
export class SessionDynamics {
  readonly #setup: DynamicsSetup;
  /** Registry plans and injections of results the core has not recorded yet, by task. */
  readonly #pending = new Map<string, { plan?: RegistryPlan; injections: Injection[] }>();

  constructor(setup: DynamicsSetup) {
    this.#setup = setup;
  }

  /** The closed artifact gates at the start of a run, for the scheduling core. */
  gates(): ReadonlyMap<string, 'pending' | 'failed'> {
    return this.#setup.registry.closedGates() as Map<string, 'pending' | 'failed'>;
  }

  /** The latest manifests of the artifacts these tasks made: a dependent's upstream manifests. */
  manifestsOf(taskIds: readonly string[]): RegistryEntry[] {
    return this.#setup.registry.manifestsOf(taskIds);
  }

  /** The artifacts these tasks made, with their status, for a gate (the quality gate's resume). */
  artifactsOf(taskIds: readonly string[]): { artifact_id: string; validation_status: string; task: string }[] {
    return this.#setup.registry.manifestsOf(taskIds).map((entry) => ({
      artifact_id: entry.artifact_id,
      validation_status: entry.validation_status,
      task: entry.metadata.task_id,
    }));
  }

  /**
   * A finished attempt of `row` (a handler's result, with its own changes, or an executor's
   * reply): the session change it makes, or its reply refused (invalid output) when its
   * manifests or verdicts do not fit the registry.
   */
  react(row: TaskRow, result: HandlerResult): HandlerResult {
    const { reply } = result;
    this.#pending.delete(row.id);
    if (reply.kind !== 'finished' || reply.status !== 'completed') return result;
    const setup = this.#setup;
    const builder = new ChangeBuilder(setup.rows());
    if (result.changes) builder.add(result.changes);
    let plan: RegistryPlan | undefined;
    if ((reply.manifests?.length ?? 0) + (reply.validations?.length ?? 0) > 0) {
      let upstream: Set<string> | undefined;
      const planned = setup.registry.plan(
        { id: row.id, role: row.role, priority: row.priority },
        reply,
        (id) => (upstream ??= upstreamOf(builder.view(), row.id)).has(id),
        (setup.now ?? (() => new Date().toISOString()))(),
      );
      if ('problem' in planned) {
        return { reply: { kind: 'error', errorClass: 'invalid-output', error: `Invalid result: ${planned.problem}` } };
      }
      plan = planned;
      builder.add({ add: [], update: [], skip: [], gates: plan.gates });
      fixRounds(builder, row, plan.failed, { validates: setup.validates, maxFixRounds: setup.maxFixRounds });
      if (plan.gates.some((gate) => gate.id === row.id && gate.gate === 'pending')) validationWaits(builder, row, setup.validates);
    }
    const injections = inject(builder, row, reply.findings, { rules: setup.rules, topic: setup.topic, work: setup.work ?? kSpecialistWork, warn: setup.warn });
    if (plan !== undefined || injections.length > 0) this.#pending.set(row.id, { ...(plan ? { plan } : {}), injections });
    return builder.empty ? result : { ...result, changes: builder.changes() };
  }

  /**
   * The run recorded `row` as finished with `reply` (before its finish entry): the registry
   * takes what its result planned, written whole, and its injections are told. Nothing when
   * the result was refused in the meantime (the core turned a refused change into a failure).
   */
  finished(row: TaskRow, reply: WorkerReply | undefined): void {
    const pending = this.#pending.get(row.id);
    if (pending === undefined) return;
    this.#pending.delete(row.id);
    if (reply?.kind !== 'finished' || reply.status !== 'completed' || row.status !== 'completed') return;
    if (pending.plan !== undefined) {
      this.#setup.registry.commit(pending.plan);
      this.#setup.registry.write(this.#setup.files);
    }
    for (const injection of pending.injections) this.#setup.injected(injection);
  }
}

export { ArtifactRegistry };
