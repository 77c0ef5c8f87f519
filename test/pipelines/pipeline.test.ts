import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { finishAttempt } from '../../src/executors/finish-attempt.js';
import { DiscussionGate } from '../../src/pipelines/analyze/discussion-gate.js';
import { GcController } from '../../src/pipelines/brainstorm/gc-controller.js';
import { findPipeline, pipelineFor } from '../../src/pipelines/pipeline-for.js';
import { inferPipeline, roleHint } from '../../src/pipelines/roles.js';
import { kPipelines } from '../../src/schema/session.js';

describe('pipelineFor', () => {
  test.each(kPipelines)('%s: the object of that name', (name) => {
    expect(pipelineFor(name).name).toBe(name);
    expect(findPipeline(name)).toBe(pipelineFor(name));
  });

  test('a name no pipeline has is not found', () => {
    expect(findPipeline('Brainstorm')).toBeUndefined();
    expect(findPipeline('custom')).toBeUndefined();
    expect(findPipeline('')).toBeUndefined();
  });
});

describe('roles', () => {
  test('each pipeline takes its own roles; generic any', () => {
    expect([...pipelineFor('brainstorm').roles!]).toEqual(['ideator', 'challenger', 'synthesizer', 'evaluator', 'gc-controller']);
    expect([...pipelineFor('analyze').roles!]).toEqual(['explorer', 'analyst', 'discussant', 'synthesizer']);
    expect(pipelineFor('generic').roles).toBeNull();
  });

  test('a session naming no pipeline is brainstorm only while every role is a brainstorm role', () => {
    expect(inferPipeline(['ideator', 'challenger', '', 'gc-controller'])).toBe('brainstorm');
    expect(inferPipeline(['ideator', 'explorer'])).toBe('generic');
    // No role at all: a plain batch, not a brainstorm.
    expect(inferPipeline([])).toBe('generic');
    expect(inferPipeline(['', ''])).toBe('generic');
  });

  test('the hint names the roles of the pipeline in force', () => {
    expect(roleHint('analyze')).toMatch(/^the analyze pipeline takes explorer, analyst, discussant, synthesizer; /);
    expect(roleHint('generic')).toMatch(/^the generic pipeline takes any role; /);
  });
});

describe('interactive handlers by role', () => {
  test('brainstorm: the GC controller; analyze: the discussion gate; generic: none', () => {
    expect([...pipelineFor('brainstorm').handlers.keys()]).toEqual(['gc-controller']);
    expect(pipelineFor('brainstorm').handlers.get('gc-controller')).toBeInstanceOf(GcController);
    expect([...pipelineFor('analyze').handlers.keys()]).toEqual(['discussant']);
    expect(pipelineFor('analyze').handlers.get('discussant')).toBeInstanceOf(DiscussionGate);
    expect(pipelineFor('generic').handlers.size).toBe(0);
  });
});

describe('attempt hooks', () => {
  test('analyze and generic reuse explorations; brainstorm, which has no explorer, runs attempts as they are', () => {
    expect(pipelineFor('brainstorm').aroundAttempt).toBeUndefined();
    expect(pipelineFor('analyze').aroundAttempt).toBeTypeOf('function');
    expect(pipelineFor('generic').aroundAttempt).toBe(pipelineFor('analyze').aroundAttempt);
  });
});

describe('decomposers', () => {
  test("each pipeline's own object lays out its rows", () => {
    const brainstorm = pipelineFor('brainstorm') as typeof import('../../src/pipelines/brainstorm/pipeline.js').brainstormPipeline;
    expect(brainstorm.decompose({ angles: ['A'], mode: 'quick' }).map((row) => row.role)).toEqual(['ideator', 'challenger', 'synthesizer']);
    const analyze = pipelineFor('analyze') as typeof import('../../src/pipelines/analyze/pipeline.js').analyzePipeline;
    expect(analyze.decompose({ topic: 't', perspectives: ['p'], mode: 'quick' }).map((row) => row.role)).toEqual(['explorer', 'analyst', 'synthesizer']);
    const generic = pipelineFor('generic') as typeof import('../../src/pipelines/generic/pipeline.js').genericPipeline;
    expect(generic.decompose(undefined).map((row) => row.id)).toEqual(['STEP-001', 'STEP-002', 'REPORT-001']);
  });
});

describe("finishAttempt applies the session pipeline's result rule", () => {
  const challenger = () => ({ id: 'C', session: mkdtempSync(join(tmpdir(), 'csv-wave-pipes-')), row: { id: 'C', role: 'challenger' } });
  const outcome = { kind: 'result' as const, result: { findings: 'f', severity_summary: 'CRITICAL:0 HIGH:1 MEDIUM:0 LOW:0' } };

  test.each([
    ['brainstorm', 'REVISION_NEEDED'],
    // A generic session's challenger kept the derivation (it applied to every pipeline before).
    ['generic', 'REVISION_NEEDED'],
    ['analyze', ''],
  ] as const)('%s: gc_signal %j', (pipeline, signal) => {
    const reply = finishAttempt(challenger(), outcome, {}, pipeline);
    expect(reply).toMatchObject({ kind: 'finished', gc_signal: signal, severity_summary: 'CRITICAL:0 HIGH:1 MEDIUM:0 LOW:0' });
  });

  test('without a pipeline, the generic rules apply (a request from before pipelines named theirs)', () => {
    expect(finishAttempt(challenger(), outcome, {})).toMatchObject({ kind: 'finished', gc_signal: 'REVISION_NEEDED' });
  });
});
