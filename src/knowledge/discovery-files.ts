import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DiscoveryFile } from '../schema/discovery-file.js';
import { cutText } from '../text/cut-text.js';
import { kLayout, type SessionFileWriter } from '../layout.js';

/** key_findings keeps at most 5 items of under 100 characters each (seed 000). */
const kMaxKeyFindings = 5;
const kMaxKeyFindingChars = 99;

/**
 * When a finished task gets `discoveries/<id>.json`. `always`: every finished task.
 * `when-rich`: only a task whose result holds something its row does not (key findings,
 * decisions, files, verification, scores, a verdict, artifacts) or that failed — plain
 * batch results are all in tasks.csv already, and creating a small file per task was most
 * of a big batch run's cost (BENCHMARKS.md). The default of the generic pipeline.
 */
export type DiscoveryFilePolicy = 'always' | 'when-rich';

export interface DiscoveryFileInput {
  taskId: string;
  role: string;
  status: DiscoveryFile['status'];
  findings: string;
  error: string | null;
  keyFindings?: readonly string[] | undefined;
  decisions?: readonly string[] | undefined;
  filesModified?: readonly string[] | undefined;
  verification?: DiscoveryFile['data']['verification'] | undefined;
  qualityScore?: number | null | undefined;
  supervisionVerdict?: DiscoveryFile['supervision_verdict'] | undefined;
  artifacts: readonly string[];
}

/** Whether the policy asks for this task's discovery file. */
export function wantsDiscoveryFile(policy: DiscoveryFilePolicy, input: DiscoveryFileInput): boolean {
  if (policy === 'always' || input.status === 'failed' || input.artifacts.length > 0) return true;
  if (input.status === 'skipped') return false;
  const listed = (list: readonly string[] | undefined) => (list?.length ?? 0) > 0;
  return (
    listed(input.keyFindings) ||
    listed(input.decisions) ||
    listed(input.filesModified) ||
    input.verification != null ||
    input.qualityScore != null ||
    input.supervisionVerdict != null
  );
}

/**
 * Writes `discoveries/<id>.json` for a finished task (schema in DESIGN.md section 7), never
 * through a symlink out of the session (throws WaveError IO).
 */
export function writeDiscoveryFile(files: SessionFileWriter, input: DiscoveryFileInput): void {
  const record: DiscoveryFile = {
    task_id: input.taskId,
    worker: input.taskId,
    timestamp: new Date().toISOString(),
    type: input.role,
    status: input.status,
    findings: cutText(input.findings, 500),
    quality_score: input.qualityScore ?? null,
    supervision_verdict: input.supervisionVerdict ?? null,
    error: input.error,
    data: {
      key_findings: (input.keyFindings ?? []).slice(0, kMaxKeyFindings).map((item) => cutText(item, kMaxKeyFindingChars)),
      decisions: [...(input.decisions ?? [])],
      files_modified: [...(input.filesModified ?? [])],
      verification: input.verification ?? null,
    },
    artifacts_produced: [...input.artifacts],
  };
  files.write(join(kLayout.discoveryRecords, `${input.taskId}.json`), `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * Removes `discoveries/<id>.json`: a task that finished again without a record of its own
 * must not leave an earlier attempt's (a failure's) for its dependents to read.
 */
export function removeDiscoveryFile(files: SessionFileWriter, taskId: string): void {
  files.remove(join(kLayout.discoveryRecords, `${taskId}.json`));
}

/** The parsed discovery file of a task, or null when there is none (or it is unreadable). */
export function readDiscoveryFile(sessionDir: string, taskId: string): DiscoveryFile | null {
  const path = join(sessionDir, kLayout.discoveryRecords, `${taskId}.json`);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DiscoveryFile;
  } catch {
    return null;
  }
}
