import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { writeDiscoveryFile } from '../../src/knowledge/discovery-files.js';
import { KnownFiles } from '../../src/knowledge/known-files.js';
import { buildUpstream } from '../../src/knowledge/upstream.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

function session(): string {
  return mkdtempSync(join(tmpdir(), 'csv-wave-known-'));
}

const dep = (id: string) => ({ id, status: 'completed', findings: `by ${id}` });
const record = (taskId: string) => ({ taskId, role: 'r', status: 'completed' as const, findings: 'f', error: null, artifacts: [] });

describe('KnownFiles: the upstream context of a run without a check per missing file', () => {
  test('files there when the run starts are read; files the run writes are read once it says so', () => {
    const dir = session();
    writeDiscoveryFile(new SessionWriter(dir), record('A'));
    const known = new KnownFiles(dir);
    expect(buildUpstream(dir, [dep('A')], known).deps[0]!.discovery?.task_id).toBe('A');

    writeDiscoveryFile(new SessionWriter(dir), record('B'));
    mkdirSync(join(dir, 'wisdom'));
    writeFileSync(join(dir, 'wisdom', 'learnings.md'), '- [B] a lesson\n');
    // Written behind its back: the run is these files' only writer, so it does not look.
    expect(buildUpstream(dir, [dep('B')], known).deps[0]!.discovery).toBeNull();
    expect(buildUpstream(dir, [], known).wisdom).toEqual({});

    known.discoveryWritten('B');
    known.wisdomWritten();
    expect(buildUpstream(dir, [dep('B')], known).deps[0]!.discovery?.task_id).toBe('B');
    expect(buildUpstream(dir, [], known).wisdom).toEqual({ 'learnings.md': '- [B] a lesson\n' });
    // Without the index every file is looked for, as before.
    expect(buildUpstream(dir, [dep('B')]).deps[0]!.discovery?.task_id).toBe('B');
  });

  test('a discoveries/ that cannot be listed (a file in its place) makes every file be looked for', () => {
    const dir = session();
    writeFileSync(join(dir, 'discoveries'), 'not a folder');
    const known = new KnownFiles(dir);
    expect(known.mayHaveDiscovery('A')).toBe(true);
  });
});
