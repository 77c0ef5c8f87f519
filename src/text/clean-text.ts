/**
 * Makes text a task produced safe to store and show: ANSI escape sequences (colours,
 * cursor moves, terminal titles) and control characters other than newline and tab are
 * removed (a carriage return becomes a newline), and a lone UTF-16 surrogate (which no file can hold) becomes U+FFFD. Invalid
 * UTF-8 in a command's output is already U+FFFD once decoded.
 */

/**
 * ESC or the 8-bit CSI, then: a CSI sequence (`ESC [ … final`), an OSC/DCS/PM/APC string
 * ended by BEL or ST (one left open ends at the line's end), or a two-character escape.
 */
const kAnsi =
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]/g;
/** CRLF, or a CR alone (progress lines that overwrite themselves): both end a line. */
const kCarriageReturn = /\r\n?/g;
/** C0 controls but TAB and LF, DEL, and the C1 controls. */
const kControls = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const kLoneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function cleanText(text: string): string {
  // Most output is clean: skip the replacements when nothing needs them.
  if (!/[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]/.test(text)) return text;
  return text.replace(kAnsi, '').replace(kCarriageReturn, '\n').replace(kControls, '').replace(kLoneSurrogate, '\ufffd');
}
