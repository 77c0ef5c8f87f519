/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate
 * pair: a lone half is not valid UTF-8, and would come back from the file as U+FFFD.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = Math.max(0, max);
  const last = text.charCodeAt(end - 1);
  return text.slice(0, end > 0 && last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}
