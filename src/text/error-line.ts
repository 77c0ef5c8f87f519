import { cutText } from './cut-text.js';

/**
 * Characters an error line may take. Only a first line longer than this is cut (at a word
 * boundary, with `…`); later lines are joined while they fit whole.
 */
export const kMaxErrorLineChars = 300;

/**
 * An error as one line of the run's output (`[FAIL]`, `[SKIP]`, `[RETRY]`, the failures at
 * the end, `status`): its first line whole, since that is where an error says what went
 * wrong, then the following lines while each fits whole. A cut is made at a line break,
 * shown by ` …`; only a first line that alone passes `max` is cut inside, at a word boundary.
 */
export function errorLine(error: string, max: number = kMaxErrorLineChars): string {
  const lines = error
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter((line) => line !== '');
  const [first, ...rest] = lines;
  if (first === undefined) return '';
  let text = fitFirstLine(first, max);
  for (const line of rest) {
    if (text.length + 1 + line.length > max) return `${text} …`;
    text += ` ${line}`;
  }
  return text;
}

/** A one-line monster cut at the last space before `max` (a space-free stretch is cut where it must be), with `…`. */
function fitFirstLine(line: string, max: number): string {
  if (line.length <= max) return line;
  const head = cutText(line, Math.max(1, max - 1));
  // The head ends a word when a space follows it; else it goes back to the last space,
  // unless that would drop more than half of it (a long URL or token with no space in it).
  if (line[head.length] === ' ') return `${head}…`;
  const space = head.lastIndexOf(' ');
  return `${space > head.length / 2 ? head.slice(0, space) : head}…`;
}
