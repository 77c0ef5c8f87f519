/*
 * Validation gating (seed 003's artifact contracts): a task whose result carried artifact
 * manifests holds back its dependents until each of its artifacts is `passed`. `pending`
 * waits for a validation (a validator task, or the quality gate); `failed` waits for a fix
 * round, or blocks. A task that validates (the session's validator roles) starts all the
 * same: it is what ends the wait. The registry of artifacts is the engine's
 * (knowledge/artifact-registry.ts); the core knows only each task's gate.
 */

/** Where the artifacts of one task stand, for its dependents. */
export type GateState =
  /** Every artifact passed validation: dependents may start. */
  | 'passed'
  /** Some artifact waits for a validation: only validators may start. */
  | 'pending'
  /** Some artifact failed validation: only validators may start, until a fix round rewires the rest. */
  | 'failed';

/** The gate of a task from its artifacts' statuses: failed over pending over passed; passed for none. */
export function gateOf(statuses: Iterable<string>): GateState {
  let gate: GateState = 'passed';
  for (const status of statuses) {
    if (status === 'failed') return 'failed';
    if (status === 'pending') gate = 'pending';
  }
  return gate;
}

/** A change of a task's gate, told with the session changes of the task whose result made it. */
export interface GateChange {
  /** The task whose artifacts these are (the one that made their latest version). */
  id: string;
  gate: GateState;
}
