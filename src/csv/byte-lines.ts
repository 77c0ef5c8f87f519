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
 * The line where a record starts, given the byte offset where the previous record ended
 * (csv-parse's info.bytes): skip the blank lines in between, then count the line ends
 * before. csv-parse's own info.lines counts a CRLF inside a quoted cell as two lines.
 * Offsets must grow from call to call, so that a whole file costs one pass.
 */
export function lineCounter(bytes: Uint8Array): (previousEnd: number) => number {
  let at = 0;
  let line = 1;
  return (previousEnd) => {
    let start = previousEnd;
    while (start < bytes.length && (bytes[start] === kLf || bytes[start] === kCr)) start++;
    for (; at < start; at++) {
      const byte = bytes[at];
      if (byte === kLf || (byte === kCr && bytes[at + 1] !== kLf)) line++;
    }
    return line;
  };
}
