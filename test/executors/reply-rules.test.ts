import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readJobReply } from '../../src/backend/bullmq/trust/reply-schema.js';
import { finishAttempt } from '../../src/executors/finish-attempt.js';
import { parseTaskOutput } from '../../src/executors/output.js';
import type { AttemptReply, TaskLimits } from '../../src/executors/messages.js';
import type { ReplyRules } from '../../src/executors/reply-rules.js';
import type { TaskResultInput } from '../../src/schema/result.js';
import type { PipelineName } from '../../src/schema/session.js';
import { hostileText as hostileTextWith, kControl, kEscapes, unruledReply } from '../helpers/forged-reply.js';

const kSecret = 'csvw-sk-live-REPLYRULES-0123456789';
/** `length` characters of hostile text, the secret in it. */
const hostileText = (length: number) => hostileTextWith(length, kSecret);

/** A task of `role`, as the rules see it locally and on the coordinator. */
function both(role: string, result: TaskResultInput, limits: TaskLimits = {}, pipeline: PipelineName = 'generic') {
  const rules: ReplyRules = { pipeline, role, limits };
  const local = finishAttempt({ id: 'T', row: { id: 'T', role } as never }, { kind: 'result', result }, limits, pipeline);
  const remote = readJobReply(JSON.stringify(unruledReply('T', role, result)), 'T', rules);
  const again = readJobReply(JSON.stringify(local), 'T', rules);
  return { local, remote, again };
}

/** Every text of a reply (keys included) but its artifacts' contents, joined: as they are, not as JSON escapes them. */
function textsOf(reply: AttemptReply): string {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        texts.push(key);
        walk(child);
      }
    }
  };
  walk(reply.kind === 'error' ? reply : { ...reply, artifacts: reply.artifacts.map((file) => file.name) });
  return texts.join(' ');
}

describe('the rules of a reply, locally and on the coordinator', () => {
  beforeEach(() => {
    vi.stubEnv('CSV_WAVE_TEST_TOKEN', kSecret);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('a hostile raw result gives the same reply from a worker that skipped them as from a local attempt', () => {
    const result: TaskResultInput = {
      status: 'completed',
      findings: hostileText(3_000_044),
      gc_signal: `CONVERGED${kEscapes}${'z'.repeat(2000)}`,
      severity_summary: `CRITICAL:0${kEscapes}`,
      error: hostileText(100_000),
      discoveries: [{ type: `idea${kEscapes}`, data: { [`key${kEscapes}`]: hostileText(300), nested: [hostileText(50)] } }],
      // `ESC s` is an escape of its own: cleaned before it is scrubbed, the secret would lose its `s` and be missed.
      wisdom: { learnings: [hostileText(200)], issues: [kSecret, `\x1b${kSecret}`] },
      artifacts: [
        { name: 'notes', content: `an artifact keeps its controls ${kEscapes} but not ${kSecret}` },
        ...Array.from({ length: 30 }, (_, index) => ({ name: `extra-${index}`, content: 'x'.repeat(1000) })),
      ],
      key_findings: [hostileText(400)],
      decisions: [hostileText(60)],
      files_modified: [`src/${kEscapes}x.ts`],
      verification: 'tested',
      quality_score: 0.5,
    };
    const { local, remote, again } = both('worker', result);
    // What the check below finds in the reply as the worker sent it.
    expect(textsOf(unruledReply('T', 'worker', result))).toMatch(kControl);
    expect(remote).toEqual(local);
    expect(again).toEqual(local);
    if (remote.kind !== 'finished') throw new Error(`not finished: ${JSON.stringify(remote).slice(0, 300)}`);
    expect(textsOf(remote)).not.toMatch(kControl);
    expect(JSON.stringify(remote)).not.toContain(kSecret.slice(1));
    expect(remote.findings.length).toBeLessThanOrEqual(500);
    expect(remote.findings).toContain('[… full output: artifacts/T/output.md]');
    const output = remote.artifacts.find((file) => file.name === 'output');
    // 14 of each 64 characters are left: the escapes go, the secret is 3 stars.
    expect(output?.content.length).toBeGreaterThan(600_000);
    expect(output?.content).toContain('findings  *** findings');
    expect(output?.content).not.toMatch(kControl);
    // 20 files at most, the findings' own included; the rest dropped with a note.
    expect(remote.artifacts).toHaveLength(20);
    expect(remote.notes?.some((note) => note.includes('artifact(s) dropped'))).toBe(true);
    expect(remote.gc_signal.length).toBeLessThanOrEqual(500);
    expect(remote.notes?.some((note) => note.startsWith('gc_signal cut'))).toBe(true);
    expect(remote.severity_summary).toBe('CRITICAL:0');
    expect(remote.error.length).toBeLessThanOrEqual(4000);
    expect(remote.discovery).toMatchObject({ taskId: 'T', role: 'worker', findings: remote.findings });
    expect(remote.artifacts.find((file) => file.name === 'notes')?.content).toBe(`an artifact keeps its controls ${kEscapes} but not ***`);
  });

  it('a failed attempt: error, notes and retry delay are cleaned and bounded the same way', () => {
    const rules: ReplyRules = { pipeline: 'generic', role: 'worker', limits: {} };
    const notes = Array.from({ length: 120 }, (_, index) => `note ${index} ${hostileText(3000)}`);
    const outcome = { kind: 'error' as const, errorClass: 'task-failure' as const, error: hostileText(1_000_000), retryAfterMs: 1e15 };
    const local = finishAttempt({ id: 'T', row: { id: 'T', role: 'worker' } as never }, { ...outcome, notes });
    const remote = readJobReply(JSON.stringify({ ...outcome, notes }), 'T', rules);
    expect(remote).toEqual(local);
    expect(readJobReply(JSON.stringify(local), 'T', rules)).toEqual(local);
    expect(textsOf(remote)).not.toMatch(kControl);
    expect(JSON.stringify(remote)).not.toContain(kSecret);
    if (remote.kind !== 'error') throw new Error('not an error');
    expect(remote.error.length).toBeLessThanOrEqual(4000);
    expect(remote.retryAfterMs).toBe(2 ** 31 - 1);
    expect(remote.notes).toHaveLength(50);
    expect(remote.notes?.at(-1)).toBe('71 more notes dropped');
    expect(Math.max(...(remote.notes ?? []).map((note) => note.length))).toBeLessThanOrEqual(1000);
  });

  it('an escape just before a secret takes none of it: a command\'s stdout, a result, a worker\'s reply', () => {
    // `ESC c` is an escape of its own: cleaned before it is scrubbed, the secret loses its first character and is missed.
    const text = `key: \x1b${kSecret} end`;
    const pieces = (found: string) => Array.from({ length: kSecret.length - 7 }, (_, at) => kSecret.slice(at, at + 8)).filter((piece) => found.includes(piece));
    const stdout = parseTaskOutput(text);
    expect(pieces(JSON.stringify(stdout))).toEqual([]);
    const { local, remote } = both('worker', { findings: text, wisdom: { learnings: [text] } });
    expect(remote).toEqual(local);
    expect(pieces(JSON.stringify(remote))).toEqual([]);
  });

  it("a challenger's labels: the signal derived from its counts, a long one cut, as locally", () => {
    const derived = both('challenger', { findings: 'f', severity_summary: 'CRITICAL:1 HIGH:0 MEDIUM:2 LOW:0' });
    expect(derived.remote).toEqual(derived.local);
    expect(derived.remote).toMatchObject({ kind: 'finished', gc_signal: 'REVISION_NEEDED' });
    const long = both('challenger', { findings: 'f', gc_signal: `REVISION_NEEDED${kEscapes}${'!'.repeat(5000)}`, severity_summary: 'x'.repeat(40_000) });
    expect(long.remote).toEqual(long.local);
    expect(long.again).toEqual(long.local);
    if (long.remote.kind !== 'finished') throw new Error('not finished');
    expect(long.remote.gc_signal).toMatch(/^REVISION_NEEDED!+…$/);
    expect(long.remote.gc_signal).toHaveLength(500);
    expect(long.remote.severity_summary).toHaveLength(500);
    expect(long.remote.findings).toContain('[severity_summary cut: the first 499 of 40000 characters kept]');
  });

  it('a reply fitted to a small cap, its output file ending in long notes, goes through the coordinator unchanged', () => {
    // 5 artifacts with 64-character names dropped: their note is longer than the room a 2 KiB cap keeps for notes.
    const names = ['a', 'b', 'c', 'd', 'e'].map((letter) => letter.repeat(64));
    const result = {
      findings: 'f'.repeat(600),
      artifacts: [...names.map((name) => ({ name, content: 'x'.repeat(1000) })), { name: 'small', content: 'y'.repeat(935) }],
    };
    const { local, again } = both('worker', result, { maxArtifactBytes: 2048, maxArtifactsPerTask: 10 });
    expect(again).toEqual(local);
    if (local.kind !== 'finished') throw new Error('not finished');
    expect(local.artifacts.map((file) => file.name)).toEqual(['output', 'small']);
    expect(local.artifacts.reduce((total, file) => total + Buffer.byteLength(file.content), 0)).toBeLessThanOrEqual(2048);
  });

  it('any result, under any caps: the same both ways, and a reply the rules made goes through them unchanged', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\n', '\t', '\x1b', '\x07', '\0', '\b', '[', ']', '"', '\\', '\ud800', kSecret), maxLength: 700 });
    const result = fc.record(
      {
        status: fc.constantFrom('completed', 'failed'),
        findings: fc.oneof(text, fc.string({ minLength: 400, maxLength: 3000 })),
        gc_signal: fc.oneof(text, fc.string({ maxLength: 700 })),
        severity_summary: fc.oneof(text, fc.constantFrom('CRITICAL:0 HIGH:2', 'low=1')),
        error: text,
        wisdom: fc.record({ learnings: fc.array(text, { maxLength: 3 }) }),
        discoveries: fc.array(fc.record({ type: text.filter((type) => type.length > 0), data: fc.dictionary(text, text, { maxKeys: 3 }) }), { maxLength: 3 }),
        // Long names make long notes of dropped artifacts, which must still fit a small cap.
        artifacts: fc.uniqueArray(
          fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9]{0,63}$/), content: fc.string({ maxLength: 1200 }) }),
          { maxLength: 8, selector: (file) => file.name },
        ),
        key_findings: fc.array(text, { maxLength: 3 }),
      },
      { requiredKeys: ['findings'] },
    );
    const limits = fc.record({ maxArtifactsPerTask: fc.integer({ min: 1, max: 8 }), maxArtifactBytes: fc.constantFrom(1024, 2048, 5000, 1 << 20) });
    fc.assert(
      fc.property(result, limits, fc.constantFrom('worker', 'challenger'), (raw, caps, role) => {
        const { local, remote, again } = both(role, raw as TaskResultInput, caps);
        expect(remote).toEqual(local);
        expect(again).toEqual(local);
        expect(textsOf(remote)).not.toMatch(kControl);
      }),
      { numRuns: Number(process.env['RUNS'] ?? (process.env['CI'] === 'true' ? 150 : 400)) },
    );
  });
});
