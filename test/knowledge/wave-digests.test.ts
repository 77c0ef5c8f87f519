import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { attemptInput, type AttemptInputSetup } from '../../src/cache/attempt-input.js';
import type { WorkerRequest } from '../../src/executors/messages.js';
import { WaveDigests } from '../../src/knowledge/prompt-context.js';
import { buildUpstream } from '../../src/knowledge/upstream.js';
import { buildSession } from '../helpers/session-builder.js';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function request(id: string, wave: number): WorkerRequest {
  return {
    executor: { type: 'openai', model: 'm' },
    task: { id, wave, attempt: 1, session: '', row: { id, role: 'writer', description: `Task ${id}` }, prev_context: '' },
    deps: [],
    timeoutMs: 0,
  };
}

/** A discovery line as a finishing task appends it to the board. */
function board(id: string, title: string): string {
  return `${JSON.stringify({ ts: 't', worker: id, type: 'note', data: { title } })}\n`;
}

describe('the shared digests of a wave', () => {
  test("are read by the wave's first attempt and stay byte-identical while tasks of the wave finish; the next wave reads them again", () => {
    const dir = buildSession(null, { files: { 'discoveries.ndjson': board('W0', 'Before the wave') } });
    folders.push(dir);
    const setup: AttemptInputSetup = {
      sessionDir: dir,
      pipeline: 'generic',
      topic: 'A topic',
      limits: {},
      upstream: (deps) => buildUpstream(dir, deps),
      digests: new WaveDigests(),
    };
    const first = attemptInput(request('A', 1), setup).prompt!;
    expect(first.discoveries).toBe('- note: Before the wave [W0]');
    expect(first.wisdom).toBe('');

    // A finishes: it adds to the board and to the wisdom files while B and C of its wave have not started.
    appendFileSync(join(dir, 'discoveries.ndjson'), board('A', 'Written by A'));
    mkdirSync(join(dir, 'wisdom'), { recursive: true });
    writeFileSync(join(dir, 'wisdom', 'learnings.md'), '- [A] A lesson\n');
    for (const id of ['B', 'C']) {
      const later = attemptInput(request(id, 1), setup).prompt!;
      expect(later.discoveries, id).toBe(first.discoveries);
      expect(later.wisdom, id).toBe(first.wisdom);
    }

    const next = attemptInput(request('D', 2), setup).prompt!;
    expect(next.discoveries).toBe('- note: Before the wave [W0]\n- note: Written by A [A]');
    expect(next.wisdom).toContain('- [A] A lesson');

    // Without the run's snapshots (status's offline keys), each attempt reads the board as it stands.
    const { digests: _digests, ...unsnapshotted } = setup;
    expect(attemptInput(request('B', 1), unsnapshotted).prompt!.discoveries).toBe(next.discoveries);
  });
});
