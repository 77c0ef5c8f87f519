import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildSession, readRows, readTasksText, tasksCsv } from './session-builder.js';

const kRow = { id: 'A', description: 'say "hi", then stop', role: 'r' };

describe('the session builder', () => {
  test('rows become tasks.csv with the usual columns first, quoted, read back as csv-wave reads them; session.json is the generic pipeline', () => {
    const dir = buildSession([kRow, { id: 'B', description: 'b', role: 'r', deps: 'A', owner: 'Ana' }]);
    expect(readTasksText(dir)).toBe(
      'id,title,description,role,deps,context_from,exec_mode,owner\n"A","","say ""hi"", then stop","r","","","",""\n"B","","b","r","A","","","Ana"\n',
    );
    expect(readRows(dir).get('B')).toMatchObject({ id: 'B', deps: 'A', status: '' });
    expect(readRows(dir).get('A')?.description).toBe('say "hi", then stop');
    expect(readFileSync(join(dir, 'session.json'), 'utf8')).toBe('{"pipeline":"generic"}');
  });

  test('tasks.csv text or bytes are written as they are, or no tasks.csv; session.json as given, or none', () => {
    const bytes = Buffer.from('\uFEFFid,description,role\r\nA,"open,r\r\n');
    const dir = buildSession(bytes, { session: null });
    expect(readFileSync(join(dir, 'tasks.csv'))).toEqual(bytes);
    expect(existsSync(join(dir, 'session.json'))).toBe(false);
    expect(readFileSync(join(buildSession('id,description,role\n', { session: '{"pipeline": ' }), 'session.json'), 'utf8')).toBe('{"pipeline": ');
    expect(readFileSync(join(buildSession([kRow], { session: { pipeline: 'generic', timeout: 0 } }), 'session.json'), 'utf8')).toBe('{"pipeline":"generic","timeout":0}');
    const noTasks = buildSession(null, { files: { 'plan.csv': 'id\n' } });
    expect(readdirSync(noTasks).sort()).toEqual(['plan.csv', 'session.json']);
  });

  test('a BOM and CRLF on request, and the rows still read back', () => {
    const text = tasksCsv([kRow], { bom: true, crlf: true });
    expect(text.startsWith('\uFEFFid,title,')).toBe(true);
    expect(text.split('\r\n')).toHaveLength(3);
    const dir = buildSession([kRow], { bom: true, crlf: true });
    expect(readTasksText(dir)).toBe(text);
    expect([...readRows(dir).keys()]).toEqual(['A']);
  });

  test('other files (in subfolders too) are written last, the session id goes where bullmq reads it, and the folder can be named', () => {
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-builder-'));
    const dir = buildSession([kRow], {
      dir: join(root, 'deep', 'session'),
      sessionId: 'abc',
      files: { 'task.mjs': 'export default () => ({});\n', 'artifacts/A/notes.md': 'n', 'session.json': '{"pipeline":"analyze"}' },
    });
    expect(dir).toBe(join(root, 'deep', 'session'));
    expect(readFileSync(join(dir, '.csv-wave', 'session-id'), 'utf8')).toBe('abc\n');
    expect(readFileSync(join(dir, 'artifacts', 'A', 'notes.md'), 'utf8')).toBe('n');
    expect(readFileSync(join(dir, 'session.json'), 'utf8')).toBe('{"pipeline":"analyze"}');
    expect(basename(buildSession([kRow], { prefix: 'csv-wave-named-' }))).toMatch(/^csv-wave-named-/);
  });
});
