import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { RolePrompts } from '../../src/executors/openai/prompt.js';
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
    expect(prompts.render(task({ role: 'ideator' }), context())).toMatch(/^Role: ideator\nPipeline: brainstorm\nTask: T-1 — A title/);
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
