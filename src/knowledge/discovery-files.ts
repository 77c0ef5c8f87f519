import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DiscoveryFile } from '../schema/discovery-file.js';
import { cutText } from './cut-text.js';
import { sessionPathForWrite } from './session-path.js';

/** key_findings keeps at most 5 items of under 100 characters each (seed 000). */
const kMaxKeyFindings = 5;
const kMaxKeyFindingChars = 99;

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

/**
 * Writes `discoveries/<id>.json` for a finished task (schema in DESIGN.md section 7), never
 * through a symlink out of the session (throws WaveError IO).
 */
export function writeDiscoveryFile(sessionDir: string, input: DiscoveryFileInput): void {
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
  writeFileSync(sessionPathForWrite(sessionDir, join('discoveries', `${input.taskId}.json`)), `${JSON.stringify(record, null, 2)}\n`);
}

/** The parsed discovery file of a task, or null when there is none (or it is unreadable). */
export function readDiscoveryFile(sessionDir: string, taskId: string): DiscoveryFile | null {
  const path = join(sessionDir, 'discoveries', `${taskId}.json`);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DiscoveryFile;
  } catch {
    return null;
  }
}
