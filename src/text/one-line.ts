import { cutText } from './cut-text.js';

/**
 * `text` on one line (every run of white space one space), at most `max` characters: a
 * longer one is cut at the last word boundary that fits and ends in `…`, so that a line of
 * the run's output never ends in half a word. A first word longer than `max` is cut inside.
 */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const room = cutText(flat, Math.max(0, max - 1));
  const space = room.lastIndexOf(' ');
  // The cut falls between two words when the next character is a space.
  const cut = flat[room.length] === ' ' ? room : space > 0 ? room.slice(0, space) : room;
  return `${cut.trimEnd()}…`;
}
