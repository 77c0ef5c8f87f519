import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import type { TaskRow } from '../../src/core/task.js';
import type { FinishedReply, WorkerRequest } from '../../src/executors/messages.js';
import { AnswerFile, AutoAnswers, NoAnswers, TerminalAnswers } from '../../src/interactive/answers.js';
import type { AnswerSource, GateDecidedEvent, InteractiveContext } from '../../src/interactive/types.js';
import { lifecycleTasks } from '../../src/pipelines/lifecycle/decompose.js';
import { parseQualityAction, weakestDimension } from '../../src/pipelines/lifecycle/quality-actions.js';
import { QualityGate } from '../../src/pipelines/lifecycle/quality-gate.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

const kScores = { completeness: 85, consistency: 80, traceability: 55, depth: 78, coverage: 81 };

/** The lifecycle's rows with the drafts done and QUALITY-<n> about to decide. */
function session(): TaskRow[] {
  const rows = lifecycleTasks({ topic: 'T', mode: 'full' });
  for (const row of rows) if (['RESEARCH-001', 'DRAFT-001', 'DRAFT-002', 'DRAFT-003'].includes(row.id)) row.status = 'completed';
  return rows;
}

function answersFile(items: unknown[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'answers-')), 'answers.json');
  writeFileSync(path, JSON.stringify(items));
  return path;
}

interface Decided {
  result: Awaited<ReturnType<QualityGate['run']>>;
  events: GateDecidedEvent[];
  dir: string;
}

/** Runs the gate of `gateId` over `rows`, its check scoring `scores`, answered by `answers`. */
async function decide(answers: AnswerSource, rows = session(), gateId = 'QUALITY-001', scores: Record<string, unknown> = kScores, config: Record<string, unknown> = {}): Promise<Decided> {
  const dir = mkdtempSync(join(tmpdir(), 'quality-'));
  const events: GateDecidedEvent[] = [];
  const gate = rows.find((row) => row.id === gateId)!;
  const checked: FinishedReply = {
    kind: 'finished',
    status: 'completed',
    findings: 'checked',
    gc_signal: '',
    severity_summary: '',
    error: '',
    discoveries: [{ type: 'quality_scores', data: scores }],
    wisdom: {},
    artifacts: [],
    supervision_verdict: undefined,
    supervision_score: undefined,
  };
  const context: InteractiveContext = {
    rows,
    config: { pipeline: 'lifecycle', topic: 'T', mode: 'full', ...config },
    sessionDir: dir,
    files: new SessionWriter(dir),
    runExecutor: async () => checked,
    answers,
    decided: (event) => events.push(event),
    artifactsOf: (ids) =>
      ['DRAFT-001', 'DRAFT-002', 'DRAFT-003']
        .filter((id) => ids.includes(id))
        .map((task) => ({ artifact_id: `doc-${task}`, validation_status: task === 'DRAFT-003' ? 'passed' : 'pending', task })),
  };
  const request = { task: { id: gate.id, row: {} } } as unknown as WorkerRequest;
  return { result: await new QualityGate().run(request, context), events, dir };
}

const deps = (changes: Decided['result']['changes']) => Object.fromEntries((changes?.update ?? []).map((update) => [update.id, update.deps]));

describe('the quality gate: every action from --answers', () => {
  test('resume: no task added; the pending artifacts upstream pass; quality.md, the cells and the event say so', async () => {
    const { result, events, dir } = await decide(new AnswerFile(answersFile(['resume'])));
    expect(result.changes).toEqual({ add: [], update: [], skip: [] });
    const reply = result.reply as FinishedReply;
    expect(reply.gc_signal).toBe('RESUME');
    expect(reply.severity_summary).toBe('completeness:85 consistency:80 traceability:55 depth:78 coverage:81');
    expect(reply.validations?.map((validation) => [validation.artifact_id, validation.validation_status])).toEqual([
      ['doc-DRAFT-001', 'passed'],
      ['doc-DRAFT-002', 'passed'],
    ]);
    expect(events).toEqual([{ id: 'QUALITY-001', round: 1, label: 'resume', source: 'answers.json' }]);
    expect(readFileSync(join(dir, 'quality.md'), 'utf8')).toMatch(
      /^### QUALITY-001 \(round 1\) - \S+\n\nScores: completeness 85, consistency 80, traceability 55, depth 78, coverage 81 \(threshold 70\)\n\nAction: resume \(from answers.json\)\n\n$/,
    );
    expect(result.record).toMatchObject({ round: 1, action: 'resume', source: 'answers.json' });
  });

  test('improve [dimension]: an IMPROVE task, then a recheck; what waited on the gate waits on the recheck', async () => {
    const { result } = await decide(new AnswerFile(answersFile(['improve depth'])));
    expect(result.changes!.add.map((row) => [row.id, row.role, row.deps, row.exec_mode, row.title, row.gc_round])).toEqual([
      ['IMPROVE-001', 'reviewer', 'QUALITY-001', 'csv-wave', 'Quality round 1: improve depth', '1'],
      ['QUALITY-002', 'reviewer', 'IMPROVE-001', 'interactive', 'Quality round 1: improve depth (check again)', '1'],
    ]);
    expect(result.changes!.add[0]!.description).toContain('Improve the depth of the specification of "T" (DRAFT-001, DRAFT-002, DRAFT-003): QUALITY-001 scored it 78 of 100 (threshold 70)');
    expect(deps(result.changes)).toEqual({ 'PLAN-001': 'DRAFT-001;DRAFT-002;DRAFT-003;QUALITY-002' });
    expect((result.reply as FinishedReply).gc_signal).toBe('IMPROVE');
  });

  test('improve alone takes the weakest dimension', async () => {
    const { result, events } = await decide(new AnswerFile(answersFile(['improve'])));
    expect(events[0]!.label).toBe('improve traceability');
    expect(result.changes!.add[0]!.title).toBe('Quality round 1: improve traceability');
    expect(weakestDimension({})).toBe('completeness');
  });

  test('revise <TASK-ID> <feedback>: a revision as csv-wave revise makes it, a recheck, and what waited on the task waits on the revision', async () => {
    const { result, events } = await decide(new AnswerFile(answersFile(['revise DRAFT-002 give every requirement an acceptance test'])));
    expect(events[0]!.label).toBe('revise DRAFT-002: give every requirement an acceptance test');
    expect(result.changes!.add.map((row) => [row.id, row.role, row.deps, row.context_from])).toEqual([
      ['DRAFT-004', 'writer', 'QUALITY-001', 'DRAFT-002;QUALITY-001'],
      ['QUALITY-002', 'reviewer', 'DRAFT-004', 'DRAFT-001;DRAFT-004;DRAFT-003'],
    ]);
    expect(result.changes!.add[0]!.description).toMatch(/^Revise the output of DRAFT-002 with this feedback: give every requirement an acceptance test\n\nThe original task: Draft the requirements/);
    expect(deps(result.changes)).toEqual({ 'PLAN-001': 'DRAFT-001;DRAFT-004;DRAFT-003;QUALITY-002' });
  });

  test('recheck: the check again, after this one', async () => {
    const { result } = await decide(new AnswerFile(answersFile(['recheck'])));
    expect(result.changes!.add.map((row) => [row.id, row.deps, row.exec_mode])).toEqual([['QUALITY-002', 'QUALITY-001', 'interactive']]);
    expect(deps(result.changes)).toEqual({ 'PLAN-001': 'DRAFT-001;DRAFT-002;DRAFT-003;QUALITY-002' });
  });

  test('feedback <text>: a revision of what it names (a task, or an artifact\'s task), else of every task checked', async () => {
    const named = await decide(new AnswerFile(answersFile(['feedback DRAFT-003 mixes two architectures'])));
    expect(named.result.changes!.add.map((row) => row.id)).toEqual(['DRAFT-004', 'QUALITY-002']);
    expect(named.result.changes!.add[0]!.description).toContain('Revise the output of DRAFT-003 with this feedback: DRAFT-003 mixes two architectures');
    const artifact = await decide(new AnswerFile(answersFile(['feedback doc-DRAFT-001 lacks metrics'])));
    expect(artifact.result.changes!.add[0]!.description).toContain('Revise the output of DRAFT-001');
    const all = await decide(new AnswerFile(answersFile(['feedback be more concrete'])));
    expect(all.result.changes!.add.map((row) => row.id)).toEqual(['DRAFT-004', 'DRAFT-005', 'DRAFT-006', 'QUALITY-002']);
    expect(all.result.changes!.add.at(-1)!.deps).toBe('DRAFT-004;DRAFT-005;DRAFT-006');
  });

  test('a gate that decides again (a resume after a kill before its finish) keeps what the same action added', async () => {
    const first = await decide(new AnswerFile(answersFile(['improve depth'])));
    const rows = session();
    rows.push(...first.result.changes!.add);
    for (const update of first.result.changes!.update) Object.assign(rows.find((row) => row.id === update.id)!, update);
    const again = await decide(new AnswerFile(answersFile(['improve depth'])), rows);
    expect(again.result.changes).toEqual({ add: [], update: [], skip: [] });
    const other = await decide(new AnswerFile(answersFile(['recheck'])), rows);
    expect(other.result.changes!.skip).toEqual([
      { id: 'QUALITY-002', error: 'Skipped: superseded by a new decision of QUALITY-001' },
      { id: 'IMPROVE-001', error: 'Skipped: superseded by a new decision of QUALITY-001' },
    ]);
    expect(other.result.changes!.add.map((row) => [row.id, row.deps])).toEqual([['QUALITY-003', 'QUALITY-001']]);
    expect(deps(other.result.changes)).toEqual({ 'PLAN-001': 'DRAFT-001;DRAFT-002;DRAFT-003;QUALITY-003' });
  });
});

describe('the quality gate: where its answers come from, and its bound', () => {
  test('--auto resumes when every score reaches the threshold, and improves the weakest otherwise', async () => {
    const low = await decide(new AutoAnswers());
    expect(low.events[0]).toEqual({ id: 'QUALITY-001', round: 1, label: 'improve traceability', source: '--auto' });
    const high = await decide(new AutoAnswers(), session(), 'QUALITY-001', { ...kScores, traceability: 90 });
    expect(high.events[0]!.label).toBe('resume');
    const threshold = await decide(new AutoAnswers(), session(), 'QUALITY-001', kScores, { quality_threshold: 50 });
    expect(threshold.events[0]!.label).toBe('resume');
    const missing = await decide(new AutoAnswers(), session(), 'QUALITY-001', { completeness: 'high' });
    expect(missing.events[0]!.label).toBe('improve completeness');
  });

  test('the check of round max_quality_rounds resumes without asking: an answers file that loops ends there', async () => {
    // Rows as three rechecks left them: QUALITY-001 → QUALITY-002 → QUALITY-003, each after the one before.
    const rows = session();
    for (const [id, after] of [['QUALITY-002', 'QUALITY-001'], ['QUALITY-003', 'QUALITY-002']] as const) {
      rows.push({ ...rows.find((row) => row.id === 'QUALITY-001')!, id, deps: after, context_from: after, extra: Object.create(null) as Record<string, string> });
    }
    const looping = new AnswerFile(answersFile(Array.from({ length: 50 }, () => 'recheck')));
    const second = await decide(looping, rows, 'QUALITY-002');
    expect(second.events[0]).toMatchObject({ round: 2, label: 'recheck', source: 'answers.json' });
    const third = await decide(looping, rows, 'QUALITY-003');
    expect(third.events[0]).toEqual({ id: 'QUALITY-003', round: 3, label: 'resume', source: 'the round limit, max_quality_rounds 3' });
    expect(looping.position().next).toBe(1);
    const once = await decide(new AnswerFile(answersFile(['recheck'])), session(), 'QUALITY-001', kScores, { max_quality_rounds: 1 });
    expect(once.events[0]!.label).toBe('resume');
  });

  test.each<[string, unknown[], RegExp]>([
    ['an action that is none', ['approve'], /--answers \S+answers\.json: item 1 "approve": "approve" is none of: resume \| improve \[dimension\]/],
    ['an unknown dimension', ['improve beauty'], /item 1 "improve beauty": improve takes a dimension: completeness, consistency, traceability, depth, coverage/],
    ['a revision of no task', ['revise NOPE-1 fix it'], /item 1 "revise NOPE-1 fix it": revise: no task "NOPE-1" in the session/],
    ['a revision without feedback', ['revise DRAFT-001'], /revise DRAFT-001 needs the feedback after the id/],
    ['an item that is no text', [{ action: 'resume' }], /item 1 is \{"action":"resume"\}, not a text/],
    ['no answer left', [], /has no answer left \(0 used\) for: QUALITY-001 \(quality round 1\)/],
  ])('%s fails the gate, naming the file and the item', async (_name, items, message) => {
    await expect(decide(new AnswerFile(answersFile(items)))).rejects.toThrow(message);
  });

  test('no terminal, no file, no --auto: the gate says how to answer it', async () => {
    await expect(decide(new NoAnswers())).rejects.toThrow(/No answer can be had: run on a terminal, or pass --answers FILE or --auto/);
  });

  test('on a terminal, a text that is no action is said, and asked again', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => {
      shown += chunk.toString();
      if (shown.endsWith('> ') && !shown.includes('is none of')) input.write('approve\n');
      else if (shown.endsWith('> ')) input.write('improve coverage\n');
    });
    const { events } = await decide(new TerminalAnswers(input, output));
    expect(events[0]).toEqual({ id: 'QUALITY-001', round: 1, label: 'improve coverage', source: 'the terminal' });
    expect(shown).toContain('"approve" is none of: resume | improve [dimension] | revise <TASK-ID> <feedback> | recheck | feedback <text>');
  });

  test('parseQualityAction: the words, in any case, and continue for resume', () => {
    const known = (id: string) => id === 'DRAFT-001';
    expect(parseQualityAction('  Continue ', known)).toEqual({ action: 'resume' });
    expect(parseQualityAction('IMPROVE Coverage', known)).toEqual({ action: 'improve', dimension: 'coverage' });
    expect(parseQualityAction('revise DRAFT-001  more  detail', known)).toEqual({ action: 'revise', task: 'DRAFT-001', feedback: 'more  detail' });
    expect(parseQualityAction('feedback   x', known)).toEqual({ action: 'feedback', text: 'x' });
    expect(parseQualityAction(`feedback ${'x'.repeat(20_000)}`, known)).toEqual({ problem: expect.stringMatching(/^20009 characters, past the 16000/) });
  });
});

describe('answers files', () => {
  test('a resume goes on after the answers the finished gates used, from the same bytes only', async () => {
    const path = answersFile(['improve', 'resume']);
    const first = new AnswerFile(path);
    await first.answer('q', 'c', () => undefined);
    const resumed = new AnswerFile(path);
    resumed.resumeAfter([first.position(), { sha256: 'other', next: 2 }, 'junk', null]);
    expect(await resumed.answer('q', 'c', () => undefined)).toBe('resume');
    const other = new AnswerFile(answersFile(['recheck']));
    other.resumeAfter([first.position()]);
    expect(await other.answer('q', 'c', () => undefined)).toBe('recheck');
  });

  test('a file that is not JSON is refused at its line and column; one too big before it is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'answers-'));
    writeFileSync(join(dir, 'bad.json'), '[\n  "resume",\n  oops\n]');
    expect(() => new AnswerFile(join(dir, 'bad.json'))).toThrow(/^--answers \S+bad\.json:3:3: not valid JSON/);
    writeFileSync(join(dir, 'big.json'), `[${'"resume",'.repeat(200_000)}"resume"]`);
    expect(() => new AnswerFile(join(dir, 'big.json'))).toThrow(/bytes, past the 1048576 csv-wave reads of it/);
    writeFileSync(join(dir, 'deep.json'), `${'['.repeat(500)}${']'.repeat(500)}`);
    expect(() => new AnswerFile(join(dir, 'deep.json'))).toThrow(/deeper than 128 levels/);
  });
});
