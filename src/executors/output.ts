import type { OutputMode } from '../schema/session.js';
import { cleanText } from '../text/clean-text.js';
import { nestsDeeperThan, tooDeepText } from '../text/json-depth.js';
import { scrubSecrets } from '../text/secret-scrubber.js';
import type { AttemptOutcome } from './types.js';

/** How much of a command's stdout was kept, when it was longer than its cap. */
export interface StdoutCut {
  /** Bytes kept from the beginning (the cap). */
  keptBytes: number;
  /** Bytes the command wrote in all. */
  totalBytes: number;
  /**
   * The end of the output, decoded: its last complete non-empty line may still be the
   * result (commands print logs first and their JSON result last).
   */
  tail?: string;
}

/**
 * Reads a command's stdout (DESIGN.md section 6): the whole of it, or else its last
 * non-empty line, if that is a JSON object, is the result; otherwise the trimmed text is
 * the findings. Secrets are scrubbed first, then ANSI escapes and control characters
 * removed: removed first, an escape would take a secret's first character with it (`ESC c`
 * is one) and leave the rest, which the scrubber no longer knows.
 *
 * Output that was meant as a JSON result but does not parse fails as `invalid-output`,
 * naming the JSON error, instead of becoming findings: stdout that starts like an object
 * (`{"`, after optional whitespace; unless its first line is a JSON object of its own: log
 * lines followed by text), or whose last line looks like one (`{"…}`). `{placeholder}` text
 * stays text.
 *
 * `cut` says the output was longer than kept: the findings are the head, with a note; a
 * JSON result in the head cannot be complete, so it fails saying so, unless the tail's
 * last complete line is the result.
 *
 * `mode` (`--output`): in `auto` (the above) a JSON object is the result only when it has
 * a `status` or `findings` key, so that the JSON of jq, curl or docker inspect is text;
 * `result` requires a result object and fails on anything else; `text` takes the trimmed
 * stdout as the findings, whatever it looks like.
 */
export function parseTaskOutput(stdout: string, cut?: StdoutCut, mode: OutputMode = 'auto'): AttemptOutcome {
  // Scrubbed before it is parsed: V8's JSON errors quote the text around the error, which
  // may hold a piece of a secret that the scrubber could not recognise afterwards.
  const trimmed = cleanText(scrubSecrets(stdout)).trim();
  const notes = cut ? [cutNote(cut)] : [];
  const withNotes = (outcome: AttemptOutcome): AttemptOutcome => (notes.length > 0 ? { ...outcome, notes } : outcome);
  const asText = (): AttemptOutcome => withNotes({ kind: 'result', result: { status: 'completed', findings: trimmed } });
  // In auto mode, JSON that is no result (no status or findings key) is the command's text.
  const taken = (object: object | undefined) => (object !== undefined && (mode === 'result' || isResultLike(object)) ? object : undefined);
  const needsResult = (what: string): AttemptOutcome =>
    withNotes({
      kind: 'error',
      errorClass: 'invalid-output',
      error: `Invalid output: --output result needs a JSON result object on stdout or its last line, ${what}`,
    });
  if (mode === 'text') return asText();

  if (cut) {
    const fromTail = taken(cut.tail === undefined ? undefined : lastLineResult(cut.tail));
    if (fromTail) return withNotes({ kind: 'result', result: fromTail });
    if (mode === 'result' && !startsLikeResult(trimmed)) return needsResult('and the last line of its end holds none');
    if (startsLikeResult(trimmed)) {
      return withNotes({
        kind: 'error',
        errorClass: 'invalid-output',
        error:
          `Invalid output: stdout starts like a JSON result, but it was ${cut.totalBytes} bytes and only the first ` +
          `${cut.keptBytes} are kept (max_stdout_bytes), so the result is incomplete. Write large content to an ` +
          `artifact, or raise max_stdout_bytes${mode === 'auto' ? ', or pass --output text to take stdout as text' : ''}`,
      });
    }
    return asText();
  }

  const whole = tryParse(trimmed);
  if (whole.object) return taken(whole.object) ? { kind: 'result', result: whole.object } : asText();
  const lines = trimmed.split('\n').filter((line) => line.trim() !== '');
  const lastLine = lines.length > 0 ? lines[lines.length - 1]!.trim() : '';
  const last = tryParse(lastLine);
  if (last.object) return taken(last.object) ? { kind: 'result', result: last.object } : asText();
  const textHint = mode === 'auto' ? '; pass --output text to take stdout as text' : '';
  if (startsLikeResult(trimmed)) {
    return {
      kind: 'error',
      errorClass: 'invalid-output',
      error: `Invalid output: stdout starts like a JSON result but is not valid JSON (${whole.error})${textHint}`,
    };
  }
  if (lastLine.startsWith('{"') && lastLine.endsWith('}')) {
    return {
      kind: 'error',
      errorClass: 'invalid-output',
      error: `Invalid output: the last line of stdout looks like a JSON result but is not valid JSON (${last.error})${textHint}`,
    };
  }
  if (mode === 'result') return needsResult(trimmed === '' ? 'and stdout was empty' : 'and stdout was text');
  return asText();
}

/** A JSON object meant as a task result: it names its status or its findings. */
function isResultLike(object: object): boolean {
  return Object.hasOwn(object, 'status') || Object.hasOwn(object, 'findings');
}

function cutNote(cut: StdoutCut): string {
  return (
    `stdout cut: the first ${cut.keptBytes} of ${cut.totalBytes} bytes kept, ` +
    `${cut.totalBytes - cut.keptBytes} dropped (max_stdout_bytes)`
  );
}

/**
 * Text that begins like a JSON object meant as the result: `{` then a key (or `}`), and a
 * first line that is not a whole object (a JSON log line followed by text is just text).
 */
function startsLikeResult(text: string): boolean {
  if (!/^\{\s*["}]/.test(text)) return false;
  const newline = text.indexOf('\n');
  return newline < 0 || tryParse(text.slice(0, newline).trim()).object === undefined;
}

/** The result on the last complete non-empty line of the end of a long output, if any. */
function lastLineResult(tail: string): object | undefined {
  const clean = cleanText(scrubSecrets(tail));
  // The first line of the tail is cut (its beginning was dropped): only later lines count.
  const lines = clean.slice(clean.indexOf('\n') + 1).split('\n').filter((line) => line.trim() !== '');
  if (clean.indexOf('\n') < 0 || lines.length === 0) return undefined;
  return tryParse(lines[lines.length - 1]!.trim()).object;
}

function tryParse(text: string): { object?: object; error?: string } {
  if (!text.startsWith('{')) return {};
  if (nestsDeeperThan(text)) return { error: tooDeepText() };
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? { object: value } : {};
  } catch (error) {
    // On one line: V8 quotes the text around the error, newlines included.
    return { error: (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ') };
  }
}
