import { formatCount } from '../../../csv/columns.js';
import { kRunDefaults } from '../../../option-table.js';
import type { AttemptReply, TaskLimits } from '../../../executors/messages.js';
import { artifactLimitsOf, maxPlannedBytes } from '../../../knowledge/artifacts.js';

/**
 * Room in a reply for what no cap of the run names: the findings cell and its copy in the
 * discovery record, gc_signal, severity_summary, the error and its copy, the notes (all
 * capped by the reply's rules to a few KB), token counts and JSON's own keys.
 */
const kFixedReplyBytes = 1024 * 1024;
/**
 * How much larger than its text a reply's return value may be: the reply is JSON, and
 * BullMQ stores it as a JSON string of that JSON, so a quote in a task's text takes 4 bytes
 * there (`\\\"`) and a newline 3 (`\\n`). A text of control characters (6 or 7 bytes each)
 * is no text a task writes into its artifacts.
 */
const kEscapeGrowth = 4;

/**
 * The most bytes a reply's return value (as Redis stores it) takes under the run's caps:
 * the artifacts' bytes (max_artifact_bytes, as planTaskArtifacts fits them), and what a
 * task may say besides (max_stdout_bytes: everything a command says goes through its
 * stdout; a module's or a model's lists and wisdom are held to as much), both grown by
 * JSON's escapes, and the fixed fields. With the default caps, 45 MiB. A larger reply came
 * from no csv-wave worker: it is refused unread, so that a worker, or anyone who can write
 * to Redis, cannot make the coordinator hold a reply of any size.
 */
export function maxReplyBytes(limits: TaskLimits): number {
  const artifacts = maxPlannedBytes(artifactLimitsOf(limits));
  const said = limits.maxStdoutBytes ?? kRunDefaults.maxStdoutBytes;
  return kEscapeGrowth * (artifacts + said) + kFixedReplyBytes;
}

/** The reply of a job whose return value of `bytes` passes `limit`: invalid output, naming both. */
export function oversizedReply(bytes: number, limit: number): AttemptReply {
  return {
    kind: 'error',
    errorClass: 'invalid-output',
    error:
      `Invalid output: the reply from the worker is ${formatCount(bytes)} bytes, past the ${formatCount(limit)} ` +
      `that the run's caps allow a reply (4 × (max_artifact_bytes + max_stdout_bytes) + 1 MiB); it was not read`,
  };
}

/**
 * The bytes of `value` as BullMQ stores a return value (its JSON, in UTF-8) when they pass
 * `limit`; undefined when they do not. A string is measured without making its JSON (a
 * string of 50 MB is not copied to be measured), and not at all when it is too short to
 * pass. Any other value came from JSON (the events' parse) and is made JSON again.
 */
export function bytesPast(value: unknown, limit: number): number | undefined {
  const bytes = typeof value === 'string' ? (6 * value.length + 2 <= limit ? 0 : jsonStringBytes(value)) : Buffer.byteLength(JSON.stringify(value) ?? '');
  return bytes > limit ? bytes : undefined;
}

/** Buffer.byteLength(JSON.stringify(text)), without the JSON. */
export function jsonStringBytes(text: string): number {
  let bytes = 2;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit === 0x22 || unit === 0x5c) bytes += 2;
    else if (unit < 0x20) bytes += unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d ? 2 : 6;
    else if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      index++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) bytes += 6; // a lone surrogate: `\udXXX`
    else bytes += 3;
  }
  return bytes;
}
