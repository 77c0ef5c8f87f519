import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { RolePrompts, systemPrompt } from '../../src/executors/openai/prompt.js';
import type { TaskInput } from '../../src/executors/types.js';
import type { PromptContext } from '../../src/knowledge/prompt-context.js';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A promptsDir holding the given `<pipeline>/<role>.md` files. */
function promptsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-role-prompts-'));
  folders.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function task(row: Record<string, string>, prevContext = ''): TaskInput {
  const full = { id: 'T-1', title: 'A title', description: 'A description', deps: '', context_from: '', exec_mode: 'csv-wave', ...row };
  return { id: full.id, wave: 1, attempt: 1, session: '/nonexistent', row: full, prev_context: prevContext, upstream: { deps: [], wisdom: {}, warnings: [] } };
}

function context(fields: Partial<PromptContext> = {}): PromptContext {
  return { pipeline: 'brainstorm', topic: 'Quiet offices', discoveries: '', upstream: '', wisdom: '', ...fields };
}

describe('RolePrompts', () => {
  test('fills the template with the row, the task id, the pipeline and the prompt context', () => {
    const dir = promptsDir({ 'brainstorm/ideator.md': '{id}|{title}|{pipeline}|{topic}|{prev_context}|{discoveries}|{upstream}|{wisdom}' });
    const text = new RolePrompts(dir).render(
      task({ role: 'ideator' }, 'earlier'),
      context({ discoveries: '- idea: X', upstream: '### D-1', wisdom: 'be brief' }),
    );
    expect(text).toBe('T-1|A title|brainstorm|Quiet offices|earlier|- idea: X|### D-1|be brief');
  });

  test('empty parts say "(none)", an empty topic points at the description', () => {
    const dir = promptsDir({ 'brainstorm/ideator.md': '{topic}|{prev_context}|{discoveries}|{upstream}|{wisdom}' });
    const text = new RolePrompts(dir).render(task({ role: 'ideator' }, ' \n'), context({ topic: '  ', upstream: '\n' }));
    expect(text).toBe('(no topic given: see the task description)|(none)|(none)|(none)|(none)');
  });

  test('a role that cannot be a file name gets the default template, never a path outside the folder', () => {
    const dir = promptsDir({ 'generic/default.md': 'default for {role}', 'secret.md': 'outside' });
    const prompts = new RolePrompts(dir);
    for (const role of ['../secret', 'a/b', '.hidden', '']) {
      expect(prompts.render(task({ role }), context()), role).toBe(`default for ${role}`);
    }
  });

  test('a pipeline that cannot be a folder name is taken as brainstorm', () => {
    const dir = promptsDir({ 'brainstorm/ideator.md': 'brainstorm ideator in {pipeline}', 'x/ideator.md': 'escaped' });
    expect(new RolePrompts(dir).render(task({ role: 'ideator' }), context({ pipeline: '../x' }))).toBe('brainstorm ideator in brainstorm');
  });

  test("a role's own template, even a built-in one, comes before the given folder's default", () => {
    const dir = promptsDir({ 'generic/default.md': 'my default' });
    const prompts = new RolePrompts(dir);
    expect(prompts.render(task({ role: 'ideator' }), context())).toMatch(/^Role: ideator\nPipeline: brainstorm\n\nYou are the ideator/);
    expect(prompts.render(task({ role: 'translator' }), context())).toBe('my default');
  });

  test('without a folder of its own, an unknown role gets the built-in default', () => {
    expect(new RolePrompts(undefined).render(task({ role: 'translator' }), context({ pipeline: 'generic' }))).toMatch(/^Role: translator\nPipeline: generic\n/);
  });

  test('a template is read once per executor: later edits of the file do not change its prompts', () => {
    const dir = promptsDir({ 'brainstorm/ideator.md': 'first' });
    const prompts = new RolePrompts(dir);
    expect(prompts.render(task({ role: 'ideator' }), context())).toBe('first');
    writeFileSync(join(dir, 'brainstorm', 'ideator.md'), 'second');
    expect(prompts.render(task({ role: 'ideator' }), context())).toBe('first');
    expect(new RolePrompts(dir).render(task({ role: 'ideator' }), context())).toBe('second');
  });
});

/** Every built-in template, as [pipeline, role]. */
const kBuiltIn = fileURLToPath(new URL('../../prompts/', import.meta.url));
const kTemplates = readdirSync(kBuiltIn).flatMap((pipeline) =>
  readdirSync(join(kBuiltIn, pipeline))
    .filter((name) => name.endsWith('.md'))
    .map((name) => [pipeline, name.slice(0, -'.md'.length)] as const),
);

/** A request's messages as the executor sends them: the system prompt, then the user prompt, serialised in order. */
function messagesText(pipeline: string, prompt: string): string {
  return JSON.stringify([
    { role: 'system', content: systemPrompt(pipeline) },
    { role: 'user', content: prompt },
  ]);
}

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return n;
}

describe("the prompts' layout for a provider's prompt cache", () => {
  test.each(kTemplates)('%s/%s: two tasks of one role in one wave send the same bytes up to their own part, and their own text only after it', (pipeline, role) => {
    const prompts = new RolePrompts(undefined);
    // What the wave's tasks share: the topic and the digests snapshotted as the wave started.
    const wave = context({ pipeline, topic: 'Quiet offices', discoveries: '- idea: Shared board line [X-1]', wisdom: '#### learnings.md\n- [X-1] Shared lesson' });
    const first = prompts.render(
      task({ id: 'FIRST-1', role, title: 'First title', description: 'First description', angle: 'First angle', gc_round: '0' }, 'First prev context'),
      { ...wave, upstream: '### D-1 (completed)\nFirst upstream' },
    );
    const second = prompts.render(
      task({ id: 'SECOND-22', role, title: 'Second title', description: 'Second description', angle: 'Second angle', gc_round: '1' }, 'Second prev context'),
      { ...wave, upstream: '### D-2 (completed)\nSecond upstream' },
    );
    const a = messagesText(pipeline, first);
    const b = messagesText(pipeline, second);
    const own = a.indexOf('## Your task');
    expect(own).toBeGreaterThan(0);
    expect(b.indexOf('## Your task')).toBe(own);
    // Byte-identical up to the task's own part: the system prompt, the role's instructions, the topic, the contract, the wisdom and the board.
    expect(commonPrefix(a, b)).toBeGreaterThanOrEqual(own);
    for (const shared of ['Quiet offices', 'Shared board line', 'Shared lesson']) expect(a.indexOf(shared), shared).toBeLessThan(own);
    // The task's own text comes after it, whatever the template shows of it.
    for (const text of ['FIRST-1', 'First title', 'First description', 'First prev context', 'First upstream']) expect(a.indexOf(text), text).toBeGreaterThan(own);
    for (const text of ['First angle']) if (a.includes(text)) expect(a.indexOf(text), text).toBeGreaterThan(own);
  });
});
