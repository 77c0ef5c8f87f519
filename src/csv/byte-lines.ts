/** Line numbers of byte offsets, counted the way a person sees lines: LF, CRLF or a lone CR. */

export const kLf = 0x0a;
export const kCr = 0x0d;

/** The line of the byte at `offset` (1-based): line ends before it, LF, CRLF or a lone CR. */
export function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let at = 0; at < offset; at++) {
    const byte = bytes[at];
    if (byte === kLf || (byte === kCr && bytes[at + 1] !== kLf)) line++;
  }
  return line;
}

/**
 * The line where a record starts, given the offset where the previous record ended (in
 * bytes, or in characters of the text): skip the blank lines in between, then count the
 * line ends before. A CRLF inside a quoted cell counts once, as a person sees it.
 * Offsets must grow from call to call, so that a whole file costs one pass.
 */
export function lineCounter(source: Uint8Array | string): (previousEnd: number) => number {
  // Line ends are ASCII, so a UTF-16 code unit of the text is compared like a byte.
  const codeAt = typeof source === 'string' ? (at: number) => source.charCodeAt(at) : (at: number) => source[at];
  const length = source.length;
  let at = 0;
  let line = 1;
  return (previousEnd) => {
    let start = previousEnd;
    while (start < length && (codeAt(start) === kLf || codeAt(start) === kCr)) start++;
    for (; at < start; at++) {
      const code = codeAt(at);
      if (code === kLf || (code === kCr && codeAt(at + 1) !== kLf)) line++;
    }
    return line;
  };
}
