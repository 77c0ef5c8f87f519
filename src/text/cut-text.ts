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

/**
 * The longest beginning of `text` whose UTF-8 encoding fits in `maxBytes`, never ending in
 * the middle of a character.
 */
export function cutTextBytes(text: string, maxBytes: number): string {
  // Every UTF-16 unit takes at most 3 bytes of UTF-8: a text this short always fits.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  return utf8Prefix(bytes.subarray(0, Math.max(0, maxBytes))).toString('utf8');
}

/**
 * `bytes` without an incomplete UTF-8 sequence at its end (a cut in the middle of a
 * character), so that decoding it does not end in U+FFFD. Invalid bytes elsewhere stay.
 */
export function utf8Prefix(bytes: Buffer): Buffer {
  // A sequence is at most 4 bytes: look back at most 3 for the lead byte of the last one.
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}
