import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { TaskRow } from '../../src/core/task.js';
import { SessionLock } from '../../src/session/lock.js';
import { runCli } from '../helpers/cli.js';
import { readRows } from '../helpers/session-builder.js';
import { readCsvRecords } from '../helpers/test-files.js';
import { discoveryKeys, kScriptedAgentCmd } from '../helpers/scripted-agent.js';

/** A fresh folder for `init` to create the session in. */
function newSessionDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'csv-wave-e2e-')), 'session');
}

/** `init` a brainstorm session run by the scripted agent, then `run` it. */
async function brainstorm(...initFlags: string[]): Promise<{ dir: string; code: number; stderr: string }> {
  const dir = newSessionDir();
  const init = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Cutting office energy use', '--cmd', kScriptedAgentCmd, ...initFlags);
  expect(init.code, init.stderr).toBe(0);
  const run = await runCli('run', dir);
  return { dir, code: run.code, stderr: run.stderr };
}

function ids(rows: Map<string, TaskRow>): string[] {
  return [...rows.keys()];
}

/**
 * The prev_context a wave file gave the task: the `[Task <id>]` sources, in order (a source's
 * findings may quote lines of this form too: only use it where the sources' findings are one line).
 */
function contextSources(dir: string, row: TaskRow): string[] {
  const record = readCsvRecords(join(dir, `wave-${row.wave}.csv`)).find((r) => r['id'] === row.id);
  expect(record, `${row.id} in wave-${row.wave}.csv`).toBeDefined();
  return [...record!['prev_context']!.matchAll(/^\[Task ([^\]]+)\]/gm)].map((match) => match[1]!);
}

function expectNoDuplicateDiscoveries(dir: string): string[] {
  const keys = discoveryKeys(dir);
  expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
  return keys;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('brainstorm end to end (scripted agent)', () => {
  test('full mode: one revision round, then convergence; rows appended, waves recomputed, synthesis sees the right context', async () => {
    const { dir, code, stderr } = await brainstorm();
    expect(code, stderr).toBe(0);
    const rows = readRows(dir);
    const row = (id: string) => rows.get(id)!;

    // Round 1: the challenger found HIGH issues, so the GC check asked for revision.
    expect(row('CHALLENGE-001')).toMatchObject({ status: 'completed', gc_signal: 'REVISION_NEEDED' });
    expect(row('CHALLENGE-001').severity_summary).toMatch(/HIGH:[1-9]/);
    expect(row('GC-CHECK-001')).toMatchObject({ status: 'completed', gc_signal: 'REVISION_NEEDED' });
    expect(row('GC-CHECK-001').findings).toMatch(/^GC decision: REVISION_NEEDED \(.+\)$/);
    expect(row('IDEA-003')).toMatchObject({ status: 'completed', gc_round: '1' });

    // The next round was appended in order, one gc_round further, and the waves recomputed.
    expect(ids(rows)).toEqual([
      'IDEA-001', 'IDEA-002', 'CHALLENGE-001', 'GC-CHECK-001', 'IDEA-003', 'SYNTH-001', 'EVAL-001',
      'CHALLENGE-002', 'GC-CHECK-002', 'IDEA-004',
    ]);
    expect(row('CHALLENGE-002')).toMatchObject({ role: 'challenger', gc_round: '1', deps: 'IDEA-003', exec_mode: 'csv-wave' });
    // One numbering: the title says the round its gc_round says.
    expect(row('CHALLENGE-002').title).toBe('Critique generated ideas (GC Round 1)');
    expect(row('GC-CHECK-002')).toMatchObject({ role: 'gc-controller', gc_round: '2', deps: 'CHALLENGE-002', exec_mode: 'interactive' });
    expect(row('IDEA-004')).toMatchObject({ role: 'ideator', gc_round: '2', deps: 'GC-CHECK-002' });
    expect(Object.fromEntries([...rows].map(([id, r]) => [id, r.wave]))).toEqual({
      'IDEA-001': '1', 'IDEA-002': '1', 'CHALLENGE-001': '2', 'GC-CHECK-001': '3', 'IDEA-003': '4',
      'CHALLENGE-002': '5', 'GC-CHECK-002': '6', 'IDEA-004': '7', 'SYNTH-001': '8', 'EVAL-001': '9',
    });

    // Round 2: no HIGH left, the check converged and skipped the revision it guarded.
    expect(row('CHALLENGE-002').severity_summary).toMatch(/CRITICAL:0 HIGH:0/);
    expect(row('GC-CHECK-002')).toMatchObject({ status: 'completed', gc_signal: 'CONVERGED' });
    expect(row('GC-CHECK-002').findings).toMatch(/^GC decision: CONVERGED \(/);
    expect(row('IDEA-004').status).toBe('skipped');
    expect(row('IDEA-004').error).toMatch(/^Skipped: GC converged/);

    // The synthesizer was moved to the last revision and reads every challenge of the rounds
    // that ran; a converged skip satisfies it but adds no context.
    expect(row('SYNTH-001')).toMatchObject({ status: 'completed', deps: 'IDEA-004' });
    expect(row('SYNTH-001').context_from).toBe('IDEA-001;IDEA-002;IDEA-003;CHALLENGE-001;CHALLENGE-002;IDEA-004');
    expect(contextSources(dir, row('SYNTH-001'))).toEqual(['IDEA-001', 'IDEA-002', 'IDEA-003', 'CHALLENGE-001', 'CHALLENGE-002']);
    expect(row('EVAL-001').status).toBe('completed');
    expect(contextSources(dir, row('EVAL-001'))[0]).toBe('SYNTH-001');

    for (const [id, decision, round] of [['GC-CHECK-001', 'REVISION_NEEDED', 1], ['GC-CHECK-002', 'CONVERGED', 2]] as const) {
      const result = JSON.parse(readFileSync(join(dir, 'interactive', `${id}-result.json`), 'utf8')) as Record<string, unknown>;
      expect(Object.keys(result).sort()).toEqual(['gc_decision', 'gc_round', 'status', 'task_id', 'timestamp']);
      expect(result).toMatchObject({ task_id: id, status: 'completed', gc_decision: decision, gc_round: round });
      expect(Number.isNaN(Date.parse(String(result['timestamp'])))).toBe(false);
    }

    const keys = expectNoDuplicateDiscoveries(dir);
    for (const type of ['idea', 'critique', 'theme', 'proposal', 'evaluation']) {
      expect(keys.some((key) => key.startsWith(`${type} `)), type).toBe(true);
    }
    expect(keys.filter((key) => key.startsWith('gc_decision '))).toEqual(['gc_decision 1', 'gc_decision 2']);
  });

  test('a challenger that is never satisfied: the round limit (default 2) forces convergence', async () => {
    vi.stubEnv('SCRIPTED_AGENT_ALWAYS_HIGH', '1');
    const { dir, code, stderr } = await brainstorm();
    expect(code, stderr).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('CHALLENGE-002')!.severity_summary).toMatch(/HIGH:[1-9]/);
    expect(rows.get('GC-CHECK-001')!.gc_signal).toBe('REVISION_NEEDED');
    expect(rows.get('GC-CHECK-002')).toMatchObject({ status: 'completed', gc_signal: 'CONVERGED' });
    expect(rows.get('GC-CHECK-002')!.findings).toMatch(/^GC decision: CONVERGED \(round limit 2 reached/);
    expect(rows.get('IDEA-004')!.error).toMatch(/^Skipped: GC converged/);
    expect(ids(rows).filter((id) => id.startsWith('GC-CHECK'))).toEqual(['GC-CHECK-001', 'GC-CHECK-002']);
    expect(rows.get('SYNTH-001')!.status).toBe('completed');
    expect(rows.get('EVAL-001')!.status).toBe('completed');
    expectNoDuplicateDiscoveries(dir);
  });

  test('--max-gc-rounds 1: the first GC check converges itself and skips the first revision', async () => {
    vi.stubEnv('SCRIPTED_AGENT_ALWAYS_HIGH', '1');
    const { dir, code, stderr } = await brainstorm('--max-gc-rounds', '1');
    expect(code, stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toMatchObject({ max_gc_rounds: 1 });
    const rows = readRows(dir);
    expect(ids(rows)).toEqual(['IDEA-001', 'IDEA-002', 'CHALLENGE-001', 'GC-CHECK-001', 'IDEA-003', 'SYNTH-001', 'EVAL-001']);
    expect(rows.get('GC-CHECK-001')).toMatchObject({ status: 'completed', gc_signal: 'CONVERGED' });
    expect(rows.get('GC-CHECK-001')!.findings).toMatch(/round limit 1 reached/);
    expect(rows.get('IDEA-003')!.status).toBe('skipped');
    expect(rows.get('IDEA-003')!.error).toMatch(/^Skipped: GC converged/);
    expect(rows.get('SYNTH-001')).toMatchObject({ status: 'completed', deps: 'IDEA-003' });
    expect(contextSources(dir, rows.get('SYNTH-001')!)).toEqual(['IDEA-001', 'IDEA-002', 'CHALLENGE-001']);
    expect(rows.get('EVAL-001')!.status).toBe('completed');
  });

  test('quick mode: ideas, one challenge, synthesis; no GC loop', async () => {
    const { dir, code, stderr } = await brainstorm('--mode', 'quick');
    expect(code, stderr).toBe(0);
    const rows = readRows(dir);
    expect(ids(rows)).toEqual(['IDEA-001', 'CHALLENGE-001', 'SYNTH-001']);
    for (const row of rows.values()) expect(row.status, row.id).toBe('completed');
    expect(existsSync(join(dir, 'interactive'))).toBe(false);
    expect(contextSources(dir, rows.get('SYNTH-001')!)).toEqual(['IDEA-001', 'CHALLENGE-001']);
    expectNoDuplicateDiscoveries(dir);
  });

  test('deep mode: one ideator, the GC loop runs its revision round and converges', async () => {
    const { dir, code, stderr } = await brainstorm('--mode', 'deep');
    expect(code, stderr).toBe(0);
    const rows = readRows(dir);
    expect(ids(rows)).toEqual([
      'IDEA-001', 'CHALLENGE-001', 'GC-CHECK-001', 'IDEA-002', 'SYNTH-001', 'EVAL-001',
      'CHALLENGE-002', 'GC-CHECK-002', 'IDEA-003',
    ]);
    expect(rows.get('GC-CHECK-001')!.gc_signal).toBe('REVISION_NEEDED');
    expect(rows.get('GC-CHECK-002')!.gc_signal).toBe('CONVERGED');
    expect(rows.get('IDEA-003')!.error).toMatch(/^Skipped: GC converged/);
    expect(rows.get('SYNTH-001')).toMatchObject({ status: 'completed', deps: 'IDEA-003' });
    expect(rows.get('EVAL-001')!.status).toBe('completed');
    expect(readdirSync(join(dir, 'interactive')).sort()).toEqual(['GC-CHECK-001-result.json', 'GC-CHECK-002-result.json']);
    expectNoDuplicateDiscoveries(dir);
  });
});

describe('init', () => {
  test('full mode with the default angles writes the sample tasks.csv; an existing session is kept unless --force', async () => {
    const dir = newSessionDir();
    const first = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Anything');
    expect(first.code, first.stderr).toBe(0);
    const sample = readFileSync(new URL('../../samples/brainstorm/tasks.csv', import.meta.url), 'utf8');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(sample);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toEqual({
      pipeline: 'brainstorm',
      topic: 'Anything',
      mode: 'full',
      max_gc_rounds: 2,
    });

    const again = await runCli('init', dir, '--template', 'analyze', '--topic', 'Something else');
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/--force/);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(sample);

    const forced = await runCli('init', dir, '--template', 'analyze', '--topic', 'Something else', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toMatchObject({ pipeline: 'analyze', topic: 'Something else' });
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).not.toBe(sample);
  });

  test('--force replaces a session that ran: nothing of it (journal, board, cache, outputs) reaches the new one', async () => {
    const { dir, code } = await brainstorm('--mode', 'quick');
    expect(code).toBe(0);
    writeFileSync(join(dir, 'notes.txt'), 'a file of my own');
    // What a crash would leave: a result in the journal that tasks.csv does not show yet.
    writeFileSync(
      join(dir, '.csv-wave', 'journal.ndjson'),
      `${JSON.stringify({ type: 'finish', id: 'IDEA-001', status: 'completed', findings: 'from the old session', gc_signal: '', severity_summary: '', error: '' })}\n`,
    );
    const forced = await runCli('init', dir, '--template', 'brainstorm', '--mode', 'quick', '--topic', 'A new topic', '--cmd', kScriptedAgentCmd, '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['.csv-wave', 'notes.txt', 'session.json', 'tasks.csv']);
    expect(readdirSync(join(dir, '.csv-wave'))).toEqual([]);

    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/Recovered/);
    expect(readRows(dir).get('IDEA-001')).toMatchObject({ status: 'completed', findings: expect.stringMatching(/^\[scripted\] Generated/) });
    const board = readFileSync(join(dir, 'discoveries.ndjson'), 'utf8');
    expect(board).toContain('A new topic');
    expect(board).not.toContain('Cutting office energy use');
  });

  test('--force waits for no run: a session a run holds is not replaced (exit 3)', async () => {
    const dir = newSessionDir();
    expect((await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Old')).code).toBe(0);
    const before = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const lock = SessionLock.acquire(dir, () => {});
    try {
      const forced = await runCli('init', dir, '--template', 'analyze', '--topic', 'New', '--force');
      expect(forced.code).toBe(3);
      expect(forced.stderr).toMatch(/locked/);
    } finally {
      lock.release();
    }
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(before);
  });

  test.each([
    [['--template', 'analyze', '--angles', 'A;B'], /--angles goes with --template brainstorm/],
    [['--template', 'analyze', '--max-gc-rounds', '3'], /--max-gc-rounds goes with --template brainstorm/],
    [['--template', 'brainstorm', '--perspectives', 'a;b'], /--perspectives goes with --template analyze/],
    [['--template', 'brainstorm', '--max-gc-rounds', 'two'], /got `two`/],
    [['--template', 'brainstorm', '--max-gc-rounds', ''], /got ``/],
    [['--template', 'brainstorm', '--model', 'm'], /--model and --base-url go with --executor openai/],
    // The pipeline's settings parser (pipelines/settings.ts) names the flag and the pipeline's modes (a string: contained as it is).
    [['--template', 'brainstorm', '--mode', 'nope'], 'Expected `--mode` to be one of quick, deep, full for the brainstorm pipeline, got `nope`'],
    [['--template', 'analyze', '--mode', 'full'], 'Expected `--mode` to be one of quick, standard, deep for the analyze pipeline, got `full`'],
  ])('a flag that does not fit is a usage error (exit 2), and nothing is written: %j', async (flags, message) => {
    const dir = newSessionDir();
    const result = await runCli('init', dir, '--topic', 'T', ...flags);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(existsSync(dir)).toBe(false);
  });

  test.each(['brainstorm', 'analyze'])('init --template %s without a topic is a usage error (exit 2) from its settings parser', async (template) => {
    const dir = newSessionDir();
    const result = await runCli('init', dir, '--template', template);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('init needs a --topic');
    expect(existsSync(dir)).toBe(false);
  });
});
