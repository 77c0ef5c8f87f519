import type { SessionFileWriter } from '../layout.js';
import { cutText, cutTextBytes } from '../text/cut-text.js';
import { kRunDefaults } from '../option-table.js';

/** The findings cell holds at most this many characters (DESIGN.md section 2). */
export const kMaxFindingsChars = 500;

/** How much one task may write to artifacts/ (RunOptions / session.json). */
export interface ArtifactLimits {
  /** Files per task, the findings' own `<id>/output.md` included. */
  maxFiles: number;
  /** Bytes per task, all its files together. */
  maxBytes: number;
}

/** The run options' defaults (option-table.ts): 20 files and 10 MiB per task. */
export const kDefaultArtifactLimits: Readonly<ArtifactLimits> = { maxFiles: kRunDefaults.maxArtifactsPerTask, maxBytes: kRunDefaults.maxArtifactBytes };

/** The name of the file that holds a task's whole findings when they do not fit the cell. */
const kOutputName = 'output';

/**
 * Where a task's artifact goes, relative to the session folder: `artifacts/<id>/<name>.md`
 * (`<name>` alone for a `.patch`).
 * A folder per task, because ids and names may both hold `-` and `.`: with one flat folder
 * task `A`'s artifact `b-output` and task `A-b`'s findings would both be `A-b-output.md`.
 * Neither an id nor a name holds `/` (both are checked where they enter).
 */
export function artifactPath(taskId: string, name: string): string {
  return `artifacts/${taskId}/${artifactFileName(name)}`;
}

/**
 * The file name of artifact `name`: `<name>.md`, but a name that ends in `.patch` keeps it
 * (`changes.patch`, a worktree task's changes), so that `git apply` takes the file as it is.
 */
export function artifactFileName(name: string): string {
  return name.endsWith('.patch') ? name : `${name}.md`;
}

/**
 * Writes `artifacts/<id>/<name>.md` and returns its path relative to the session folder.
 * Never through a symlink out of the session (throws WaveError IO, see session-path.ts).
 */
export function writeArtifact(files: SessionFileWriter, taskId: string, name: string, content: string): string {
  const relative = artifactPath(taskId, name);
  files.write(relative, content);
  return relative;
}

/** The findings text with its notes, one `[note]` line each. */
export function withNotes(findings: string, notes: readonly string[]): string {
  const lines = notes.map((note) => `[${note}]`);
  return findings === '' ? lines.join('\n') : [findings, ...lines].join('\n');
}

/** Characters of notes a findings cell shows at most; the artifact has them all. */
const kMaxCellNotesChars = 300;

/** The cell of findings whose whole text is in `artifact`: their beginning, the notes, a pointer. */
function fittedCell(findings: string, notes: readonly string[], artifact: string): string {
  const pointer = ` [… full output: ${artifact}]`;
  let noteText = notes.length === 0 ? '' : `\n${withNotes('', notes)}`;
  if (noteText.length > kMaxCellNotesChars) noteText = `${cutText(noteText, kMaxCellNotesChars - 1)}…`;
  return cutText(findings, Math.max(0, kMaxFindingsChars - pointer.length - noteText.length)) + noteText + pointer;
}

/**
 * A task's artifacts within its limits, planned without touching the disk (a worker does
 * this; the engine writes the files). Findings that fit go to the cell as they are; longer
 * ones become `artifacts/<id>/output.md`, and the cell keeps their beginning and a pointer
 * to that file. That file is counted first (findings are the task's main output), then the
 * result's artifacts in order: one that would pass the file count or the byte total is
 * dropped, findings past the byte total are cut, and each of those is said in a note. The
 * notes end the findings, in the cell (even a cut one) and in the file.
 */
export function planTaskArtifacts(
  taskId: string,
  findings: string,
  extra: readonly { name: string; content: string }[],
  limits: ArtifactLimits,
  notes: readonly string[] = [],
): { cell: string; files: { name: string; content: string }[]; notes: string[] } {
  // Findings that fit the cell need no file, unless the notes of dropped artifacts make
  // them too long: then the plan is made again with the output file counted.
  let plan = planArtifacts(findings, extra, limits, notes, withNotes(findings, notes).length > kMaxFindingsChars);
  if (!plan.output && withNotes(plan.findings, plan.notes).length > kMaxFindingsChars) {
    plan = planArtifacts(findings, extra, limits, notes, true);
  }
  const files: { name: string; content: string }[] = [];
  let cell = withNotes(plan.findings, plan.notes);
  if (plan.output) {
    files.push({ name: kOutputName, content: outputText(plan.findings, plan.notes, notesReserve(limits)) });
    cell = fittedCell(plan.findings, plan.notes, artifactPath(taskId, kOutputName));
  }
  files.push(...plan.accepted);
  return { cell, files, notes: plan.notes };
}

/** Writes planned artifact files in order; returns their paths relative to the session folder. */
export function writeArtifactFiles(writer: SessionFileWriter, taskId: string, files: readonly { name: string; content: string }[]): string[] {
  return files.map((file) => writeArtifact(writer, taskId, file.name, file.content));
}

/**
 * The output file: the findings, then their notes in at most `reserve` bytes (the room
 * kept for them), so that the planned files never pass the byte cap; the reply's notes
 * keep them all. Only notes longer than a quarter of a cap under 16 KiB are cut.
 */
function outputText(findings: string, notes: readonly string[], reserve: number): string {
  const text = withNotes(findings, notes);
  const noteBytes = Buffer.byteLength(text) - Buffer.byteLength(findings);
  if (noteBytes <= reserve) return text;
  return findings + cutTextBytes(text.slice(findings.length), Math.max(0, reserve - 3)) + '…';
}

/** Room kept in the byte total for the notes that end the output file. */
const kNotesReserve = 4096;

/** The room kept for the output file's notes under `limits`: a quarter of a small cap. */
function notesReserve(limits: ArtifactLimits): number {
  return Math.min(kNotesReserve, Math.floor(limits.maxBytes / 4));
}

/**
 * The limits of a run's caps (TaskLimits / RunOptions), an absent one at its default.
 * Structural, so that this file needs nothing of the executors.
 */
export function artifactLimitsOf(limits: { maxArtifactsPerTask?: number; maxArtifactBytes?: number }): ArtifactLimits {
  return {
    maxFiles: limits.maxArtifactsPerTask ?? kDefaultArtifactLimits.maxFiles,
    maxBytes: limits.maxArtifactBytes ?? kDefaultArtifactLimits.maxBytes,
  };
}

/**
 * The most bytes planTaskArtifacts gives one task's files under `limits`, so that the
 * engine can check a reply against it: the cap itself (the notes that end the output file
 * keep to the room kept for them, see outputText).
 */
export function maxPlannedBytes(limits: ArtifactLimits): number {
  return limits.maxBytes;
}

function planArtifacts(
  findings: string,
  extra: readonly { name: string; content: string }[],
  limits: ArtifactLimits,
  notes: readonly string[],
  output: boolean,
): { output: boolean; findings: string; notes: string[]; accepted: { name: string; content: string }[] } {
  const allNotes = [...notes];
  let kept = findings;
  let bytesLeft = limits.maxBytes;
  let filesLeft = limits.maxFiles;
  if (output) {
    filesLeft--;
    const size = Buffer.byteLength(findings);
    const reserve = notesReserve(limits);
    const room = limits.maxBytes - reserve;
    if (size > room) {
      kept = cutTextBytes(findings, room);
      allNotes.push(
        `findings cut: the first ${Buffer.byteLength(kept)} of ${size} bytes kept (max_artifact_bytes ${limits.maxBytes})`,
      );
    }
    bytesLeft -= Buffer.byteLength(kept) + reserve;
  }
  const dropped: string[] = [];
  const accepted: { name: string; content: string }[] = [];
  // A name is one file: a second artifact of that name (in any case: some file systems do
  // not tell `Notes` from `notes`), or one named like the findings' own file when that is
  // written, is refused rather than written over the first.
  const taken = new Set(output ? [kOutputName] : []);
  const clashing: string[] = [];
  for (const artifact of extra) {
    const key = artifact.name.toLowerCase();
    if (taken.has(key)) {
      clashing.push(artifact.name);
      continue;
    }
    taken.add(key);
    const size = Buffer.byteLength(artifact.content);
    if (filesLeft <= 0 || size > bytesLeft) {
      dropped.push(`${artifact.name} (${size} bytes)`);
      continue;
    }
    filesLeft--;
    bytesLeft -= size;
    accepted.push(artifact);
  }
  if (dropped.length > 0) {
    const shown = dropped.slice(0, 5).join(', ') + (dropped.length > 5 ? ` and ${dropped.length - 5} more` : '');
    allNotes.push(
      `${dropped.length} artifact(s) dropped, past the cap of ${limits.maxFiles} files and ${limits.maxBytes} bytes per task (max_artifacts_per_task, max_artifact_bytes): ${shown}`,
    );
  }
  if (clashing.length > 0) {
    const shown = clashing.slice(0, 5).join(', ') + (clashing.length > 5 ? ` and ${clashing.length - 5} more` : '');
    allNotes.push(
      `${clashing.length} artifact(s) dropped, named like an earlier one of this task` +
        `${output ? ` or like its findings' own file (${kOutputName})` : ''}: ${shown}`,
    );
  }
  return { output, findings: kept, notes: allNotes, accepted };
}
