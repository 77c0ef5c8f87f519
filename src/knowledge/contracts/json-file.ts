import { readFileSync, statSync } from 'node:fs';
import { textProblem } from '../../csv/utf8-text.js';
import { WaveError, type WaveErrorCode } from '../../errors.js';
import { nestsDeeperThan, tooDeepText } from '../../text/json-depth.js';
import { jsonErrorPosition } from '../../text/json-error-position.js';

/**
 * A JSON file a person may have written or a copy may have brought (artifact-registry.json,
 * an answers file), read whole and refused in a compiler's terms, naming the file and the
 * line: `<shown>:<line>:<column>: not valid JSON: …`, or `<shown>:<line>: …` for bytes that
 * are no UTF-8 text. A file past `maxBytes`, or one that nests past 128 levels, is refused
 * before it is parsed. The BOM of a Windows editor is dropped.
 */
export function readJsonFile(path: string, shown: string, code: WaveErrorCode, maxBytes: number): { value: unknown; text: string } {
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > maxBytes) throw new WaveError(code, `${shown}: ${size} bytes, past the ${maxBytes} csv-wave reads of it`, { path: shown });
    bytes = readFileSync(path);
  } catch (error) {
    if (error instanceof WaveError) throw error;
    throw new WaveError(code, `${shown}: cannot be read: ${(error as Error).message}`, { path: shown, cause: error });
  }
  const problem = textProblem(bytes);
  if (problem !== undefined) throw new WaveError(code, `${shown}:${problem.line}: ${problem.message}`, { path: shown, violations: [problem] });
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (nestsDeeperThan(text)) throw new WaveError(code, `${shown}:1: not read: ${tooDeepText()}`, { path: shown });
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch (error) {
    const { line, column, detail } = jsonErrorPosition(text, error as Error);
    throw new WaveError(code, `${shown}:${line}:${column}: not valid JSON: ${detail}`, { path: shown, violations: [{ line, message: `not valid JSON: ${detail}` }] });
  }
}
