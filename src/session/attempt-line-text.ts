import type { AttemptLine } from '../schema/attempt.js';

/**
 * One attempts.ndjson line as text: what `JSON.stringify(line)` writes (same keys, same
 * order; a test compares the two), without its generic walk over the object. A run writes
 * one per attempt on the engine's main thread.
 */
export function attemptLineText(line: AttemptLine): string {
  return (
    `{"run":${JSON.stringify(line.run)},"task":${JSON.stringify(line.task)},"attempt":${num(line.attempt)},"wave":${num(line.wave)}` +
    `,"start":${JSON.stringify(line.start)},"end":${JSON.stringify(line.end)},"duration_ms":${num(line.duration_ms)}` +
    (line.queued_ms === undefined ? '' : `,"queued_ms":${num(line.queued_ms)}`) +
    `,"outcome":"${line.outcome}","error_class":${JSON.stringify(line.error_class)},"error":${JSON.stringify(line.error)}` +
    `,"thread":${line.thread === null ? 'null' : num(line.thread)},"host":${JSON.stringify(line.host)},"pid":${num(line.pid)}` +
    `,"prompt_tokens":${num(line.prompt_tokens)},"completion_tokens":${num(line.completion_tokens)}${cacheText(line)}}`
  );
}

/** The key and the cache's fields, when the line has them (a completed result's). */
function cacheText(line: AttemptLine): string {
  if (line.key === undefined) return '';
  let text = `,"key":${JSON.stringify(line.key)}`;
  if (line.input_key !== undefined) text += `,"input_key":${JSON.stringify(line.input_key)}`;
  if (line.cached === true) text += ',"cached":true';
  if (line.saved_usd !== undefined) text += `,"saved_usd":${num(line.saved_usd)}`;
  return text;
}

/** A number as JSON writes it: NaN and the infinities are null. */
function num(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
