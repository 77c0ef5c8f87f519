import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createTaskRunner } from '../../src/run/task-runner.js';
import type { ExecutionBackend } from '../../src/backend/execution-backend.js';
import type { AttemptReply, AttemptRequest, WorkerRequest } from '../../src/executors/messages.js';
import { writeAttemptFiles } from '../../src/run/record/attempt-files.js';
import { buildUpstream, type DependencyState } from '../../src/knowledge/upstream.js';
import { pipelineFor } from '../../src/pipelines/pipeline-for.js';
import type { PipelineName } from '../../src/schema/session.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

/** A task runner of the given pipeline over a fake backend that records the requests it got. */
function runner(pipeline: PipelineName) {
  const session = mkdtempSync(join(tmpdir(), 'csv-wave-runner-hook-'));
  const got: AttemptRequest[] = [];
  const backend: ExecutionBackend = {
    submit: async (request: AttemptRequest): Promise<AttemptReply> => {
      got.push(request);
      const findings = `by ${request.task.id}`;
      return {
        kind: 'finished', status: 'completed', findings, gc_signal: '', severity_summary: '', error: '',
        discoveries: [], wisdom: {}, artifacts: [], supervision_verdict: undefined, supervision_score: undefined,
        discovery: { taskId: request.task.id, role: 'explorer', status: 'completed', findings, error: null, artifacts: [] },
      };
    },
    cancelAll: async () => {},
    close: async () => {},
  };
  const warnings: string[] = [];
  const sink = {
    upstream: (deps: DependencyState[]) => buildUpstream(session, deps),
    attemptFiles: (taskId: string, reply: AttemptReply) => writeAttemptFiles(new SessionWriter(session), taskId, reply, 'when-rich', {}),
  };
  const run = createTaskRunner({
    backend,
    sink,
    pipeline: pipelineFor(pipeline),
    files: new SessionWriter(session),
    topic: '',
    limits: {},
    warn: (message) => warnings.push(message),
  });
  const explorer = (id: string): WorkerRequest => ({
    executor: { type: 'command', template: 'true' },
    task: { id, wave: 1, attempt: 1, session, row: { id, role: 'explorer', angle: 'costs' }, prev_context: '' },
    deps: [],
    timeoutMs: 0,
  });
  return { run, got, warnings, explorer };
}

describe("the task runner applies the session pipeline's attempt hook", () => {
  test.each(['analyze', 'generic'] as const)('%s: the second explorer of an angle reuses the first, finished on the main thread', async (name) => {
    const { run, got, warnings, explorer } = runner(name);
    await run(explorer('E1'));
    expect(await run(explorer('E2'))).toMatchObject({ kind: 'finished', status: 'completed', findings: 'by E1' });
    expect(got.map((request) => request.task.id)).toEqual(['E1']);
    expect(warnings).toEqual(['E2 reused the exploration of E1 (angle costs)']);
  });

  test('brainstorm has no hook: every attempt goes to the pool, which is told the pipeline', async () => {
    const { run, got, explorer } = runner('brainstorm');
    await run(explorer('E1'));
    await run(explorer('E2'));
    expect(got.map((request) => [request.task.id, request.pipeline])).toEqual([['E1', 'brainstorm'], ['E2', 'brainstorm']]);
  });
});
