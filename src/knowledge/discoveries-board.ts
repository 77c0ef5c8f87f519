import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cutText } from '../text/cut-text.js';
import { discoveryLineSchema, type DiscoveryInput, type DiscoveryLine } from '../schema/discovery.js';
import { kLayout, type SessionFileWriter } from '../layout.js';
import { kRunDefaults } from '../option-table.js';


/** The data field that identifies a discovery of each known type (DESIGN.md section 7). */
const kDedupField: Record<string, string> = {
  idea: 'title',
  critique: 'idea_title',
  theme: 'name',
  proposal: 'title',
  evaluation: 'proposal_title',
  gc_decision: 'round',
};

/** The key under which a discovery counts as already on the board. */
function dedupKey(type: string, data: Record<string, unknown>): string {
  const field = kDedupField[type];
  const identity = field !== undefined && data[field] !== undefined ? data[field] : data;
  return `${type}\u0000${JSON.stringify(identity)}`;
}

/**
 * `discoveries.ndjson`, the append-only board all tasks share. The engine is its only
 * writer (so no line is ever torn), and drops a discovery whose key is already there. A
 * discovery whose line would be longer than `maxLineBytes` is dropped with a warning
 * naming the task: one task cannot flood the board every other task reads.
 */
export class DiscoveryBoard {
  readonly #files: SessionFileWriter;
  readonly #keys = new Set<string>();
  readonly #warn: (message: string) => void;
  readonly #maxLineBytes: number;

  constructor(files: SessionFileWriter, warn: (message: string) => void, options: { maxLineBytes?: number } = {}) {
    this.#files = files;
    this.#warn = warn;
    this.#maxLineBytes = options.maxLineBytes ?? kRunDefaults.maxDiscoveryLineBytes;
    for (const line of readDiscoveries(join(files.dir, kLayout.discoveries), warn)) this.#keys.add(dedupKey(line.type, line.data));
  }

  /** Appends the new discoveries of one task; returns how many were new. */
  add(worker: string, discoveries: readonly DiscoveryInput[]): number {
    // Most tasks report none: no clock read, no string built.
    if (discoveries.length === 0) return 0;
    let text = '';
    let added = 0;
    const ts = new Date().toISOString();
    for (const discovery of discoveries) {
      const line: DiscoveryLine = { ts, worker, type: discovery.type, data: discovery.data };
      const json = JSON.stringify(line);
      const bytes = Buffer.byteLength(json) + 1;
      if (bytes > this.#maxLineBytes) {
        this.#warn(
          `${worker}: dropped a discovery of type ${JSON.stringify(cutText(discovery.type, 40))}: its line is ${bytes} bytes, past the cap of ${this.#maxLineBytes} (max_discovery_line_bytes)`,
        );
        continue;
      }
      const key = dedupKey(discovery.type, discovery.data);
      if (this.#keys.has(key)) continue;
      this.#keys.add(key);
      text += `${json}\n`;
      added++;
    }
    if (text !== '') this.#files.append(kLayout.discoveries, text);
    return added;
  }
}

/** Every well-formed line of a discoveries file; malformed ones are skipped with a warning. */
export function readDiscoveries(path: string, warn: (message: string) => void = () => {}): DiscoveryLine[] {
  if (!existsSync(path)) return [];
  const lines: DiscoveryLine[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      if (text.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        warn(`discoveries.ndjson:${index + 1}: skipped a line that is not JSON`);
        return;
      }
      const result = discoveryLineSchema.safeParse(parsed);
      if (result.success) lines.push(result.data);
      else warn(`discoveries.ndjson:${index + 1}: skipped a line that is not a discovery (${result.error.issues[0]?.message})`);
    });
  return lines;
}
