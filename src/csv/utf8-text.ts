import { constants as bufferConstants, isUtf8 } from 'node:buffer';
import { WaveError, type Violation } from '../errors.js';
import { lineOfByte } from './byte-lines.js';
import { formatCount, showCell } from './columns.js';

/** Longest string V8 can hold: a bigger file cannot be read as one text. */
const kStringMaxLength = bufferConstants.MAX_STRING_LENGTH;

/**
 * The text of a file that must be UTF-8. Throws WaveError CSV_PARSE, with the line, for a
 * UTF-16 file, a NUL byte, invalid UTF-8 (a Latin-1 or Windows-1252 file is that, and is
 * said to be) or a file too big to hold as one string.
 */
export function decodeUtf8Text(bytes: Buffer, path = 'tasks.csv'): string {
  const problem = textProblem(bytes) ?? sizeProblem(bytes);
  if (problem !== undefined) {
    throw new WaveError('CSV_PARSE', problem.message, { path, violations: [problem] });
  }
  return bytes.toString('utf8');
}

/** The first reason these bytes are not UTF-8 text, at its line; undefined when they are. */
export function textProblem(bytes: Uint8Array): Violation | undefined {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    const mark = `0x${hexByte(bytes[0])} 0x${hexByte(bytes[1]!)}`;
    return { line: 1, message: `The file is UTF-16 (it starts with the bytes ${mark}): save it as UTF-8 (in a spreadsheet: "CSV UTF-8")` };
  }
  const nul = nulByteProblem(bytes);
  if (nul !== undefined) return nul;
  if (isUtf8(bytes)) return undefined;
  const at = firstInvalidUtf8(bytes);
  const byte = bytes[at]!;
  // A Latin-1 or Windows-1252 file is plain ASCII up to its first accented letter; a UTF-8
  // file with one bad byte usually has good multi-byte letters before it.
  const asWindows1252 = bytes.subarray(0, at).every((b) => b < 0x80) ? windows1252Char(byte) : undefined;
  const what =
    asWindows1252 === undefined
      ? `0x${hexByte(byte)}`
      : `0x${hexByte(byte)}, ${quotedChar(asWindows1252)} in Latin-1/Windows-1252`;
  return {
    line: lineOfByte(bytes, at),
    message: `Invalid UTF-8 at byte ${at} (${what}): save the file as UTF-8 (in a spreadsheet: "CSV UTF-8")`,
  };
}

/**
 * The first NUL byte, at its line; undefined when there is none. Text a string already
 * holds can carry one too (a library caller's), so parseTasks checks for it as well.
 */
export function nulByteProblem(bytes: Uint8Array): Violation | undefined {
  const offset = bytes.indexOf(0);
  if (offset === -1) return undefined;
  return {
    line: lineOfByte(bytes, offset),
    message: `NUL byte at byte ${offset}: a text file holds none (UTF-16 and binary files do); save the file as UTF-8 (in a spreadsheet: "CSV UTF-8")`,
  };
}

function sizeProblem(bytes: Buffer): Violation | undefined {
  if (bytes.length <= kStringMaxLength) return undefined;
  return {
    line: 1,
    message: `The file is ${formatCount(bytes.length)} bytes, more than csv-wave can read (${formatCount(kStringMaxLength)}): split the tasks into several sessions`,
  };
}

/**
 * Offset of the first byte of the first ill-formed UTF-8 sequence (Unicode 15, table 3-7:
 * no overlong forms, no surrogates, nothing past U+10FFFF), or -1.
 */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const continuation = (at: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at];
    return byte !== undefined && byte >= low && byte <= high;
  };
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    let size: number;
    if (lead < 0x80) size = 1;
    else if (lead >= 0xc2 && lead <= 0xdf) size = continuation(at + 1) ? 2 : 0;
    else if (lead >= 0xe0 && lead <= 0xef) {
      const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
      size = continuation(at + 1, low, high) && continuation(at + 2) ? 3 : 0;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      const [low, high] = lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
      size = continuation(at + 1, low, high) && continuation(at + 2) && continuation(at + 3) ? 4 : 0;
    } else size = 0;
    if (size === 0) return at;
    at += size;
  }
  return -1;
}

/** Windows-1252's letters for 0x80-0x9F (Latin-1 has controls there); `\0` where it has none. */
const kWindows1252High = '€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ';

/** The character a byte stands for in Windows-1252 (a superset of Latin-1's letters), if any. */
function windows1252Char(byte: number): string | undefined {
  if (byte < 0x80) return undefined;
  if (byte >= 0xa0) return String.fromCharCode(byte);
  const char = kWindows1252High[byte - 0x80]!;
  return char === '\0' ? undefined : char;
}

function quotedChar(char: string): string {
  const shown = showCell(char);
  return shown.startsWith('"') ? shown : `"${shown}"`;
}

function hexByte(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, '0');
}
