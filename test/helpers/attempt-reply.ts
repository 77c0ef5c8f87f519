import type { AttemptReply } from '../../src/executors/messages.js';

export type FinishedAttemptReply = Extract<AttemptReply, { kind: 'finished' }>;

/**
 * A finished attempt of task T as a worker returns it (completed, findings `f`, no files,
 * no knowledge); a test gives what it checks in `overrides`.
 */
export function finishedAttempt(overrides: Partial<FinishedAttemptReply> = {}): FinishedAttemptReply {
  return {
    kind: 'finished',
    status: 'completed',
    findings: 'f',
    gc_signal: '',
    severity_summary: '',
    error: '',
    discoveries: [],
    wisdom: {},
    artifacts: [],
    discovery: { taskId: 'T', role: 'r', status: 'completed', findings: 'f', error: null, artifacts: [] },
    supervision_verdict: undefined,
    supervision_score: undefined,
    ...overrides,
  };
}
