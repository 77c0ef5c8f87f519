import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionPathForRead, sessionPathForWrite } from '../../src/files/session-path.js';
import { ExplorationCache } from '../../src/knowledge/exploration-cache.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { resultText } from '../helpers/test-files.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

function outsideFolder(): string {
  return mkdtempSync(join(tmpdir(), 'csv-wave-outside-'));
}

function emptySession(): string {
  return mkdtempSync(join(tmpdir(), 'csv-wave-paths-'));
}

describe('sessionPathForWrite', () => {
  it('resolves a path inside the session and creates the folders on the way', () => {
    const dir = emptySession();
    const path = sessionPathForWrite(dir, join('artifacts', 'deep', 'T1-notes.md'));
    expect(path).toBe(join(dir, 'artifacts', 'deep', 'T1-notes.md'));
    expect(existsSync(join(dir, 'artifacts', 'deep'))).toBe(true);
  });

  it.each([
    ['../escape.md'],
    ['artifacts/../../escape.md'],
    ['/etc/passwd'],
    ['.'],
    [''],
  ])('refuses %j: it does not name a file inside the session', (relative) => {
    const dir = emptySession();
    expect(() => sessionPathForWrite(dir, relative)).toThrow(
      expect.objectContaining({ code: 'IO', message: expect.stringMatching(/^Refused to write .*not name a file inside the session folder/) }),
    );
  });

  it('refuses to write through a folder symlinked out of the session, and creates nothing there', () => {
    const dir = emptySession();
    const outside = outsideFolder();
    symlinkSync(outside, join(dir, 'artifacts'));
    expect(() => sessionPathForWrite(dir, join('artifacts', 'sub', 'T1-output.md'))).toThrow(
      new RegExp(`artifacts is a symlink to ${outside}, outside the session folder`),
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a file that is a symlink out of the session, or one that leads nowhere', () => {
    const dir = emptySession();
    const outside = outsideFolder();
    mkdirSync(join(dir, 'discoveries'));
    symlinkSync(join(outside, 'stolen.json'), join(dir, 'discoveries', 'T1.json'));
    expect(() => sessionPathForWrite(dir, 'discoveries/T1.json')).toThrow(/discoveries\/T1\.json is a symlink that leads nowhere/);
    writeFileSync(join(outside, 'stolen.json'), 'x');
    expect(() => sessionPathForWrite(dir, 'discoveries/T1.json')).toThrow(/is a symlink to .*stolen\.json, outside the session folder/);
  });

  it('follows a symlink that stays inside the session', () => {
    const dir = emptySession();
    mkdirSync(join(dir, 'kept'));
    symlinkSync(join(dir, 'kept'), join(dir, 'artifacts'));
    const path = sessionPathForWrite(dir, 'artifacts/T1-output.md');
    writeFileSync(path, 'hello');
    expect(readFileSync(join(dir, 'kept', 'T1-output.md'), 'utf8')).toBe('hello');
  });

  it('works for a session reached through a symlink (as /tmp is on macOS)', () => {
    const real = emptySession();
    const alias = join(outsideFolder(), 'alias');
    symlinkSync(real, alias);
    writeFileSync(sessionPathForWrite(alias, 'wisdom/learnings.md'), 'x');
    expect(existsSync(join(real, 'wisdom', 'learnings.md'))).toBe(true);
  });
});

describe('a module path in session.json', () => {
  it('sessionPathForRead keeps relative paths inside the session, through symlinks too', () => {
    const dir = emptySession();
    const outside = outsideFolder();
    writeFileSync(join(outside, 'evil.mjs'), 'export default async () => ({})');
    symlinkSync(join(outside, 'evil.mjs'), join(dir, 'agent.mjs'));
    expect(() => sessionPathForRead(dir, '../evil.mjs')).toThrow(/leads out of the session folder/);
    expect(() => sessionPathForRead(dir, 'agent.mjs')).toThrow(/resolves to .*evil\.mjs, outside the session folder/);
    expect(sessionPathForRead(dir, 'agents/missing.mjs')).toBe(join(dir, 'agents', 'missing.mjs'));
  });

  it('a relative module path that leaves the session is refused before anything runs (exit 2)', async () => {
    const dir = buildSession([{ id: 'T1', description: 'x', role: 'r' }], {
      session: JSON.stringify({ pipeline: 'generic', executor: { type: 'module', module: '../agent.mjs' } }),
    });
    const result = await runCli('run', dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/session\.json: executor\.module: .*leads out of the session folder/);
    expect(result.stderr).toMatch(/A relative module path must stay inside the session folder/);
    expect(readRows(dir).get('T1')!.status).toBe('');
  });
});

describe('the exploration cache', () => {
  it('does not write through explorations/ symlinked out of the session, and reads only its own file names', () => {
    const dir = emptySession();
    const outside = outsideFolder();
    symlinkSync(outside, join(dir, 'explorations'));
    expect(() => new ExplorationCache(new SessionWriter(dir)).store('Cost', 'E1', 'found')).toThrow(/explorations is a symlink to/);
    expect(readdirSync(outside)).toEqual([]);

    const other = emptySession();
    mkdirSync(join(other, 'explorations'));
    writeFileSync(join(outside, 'secret.json'), JSON.stringify({ findings: 'secret' }));
    const index = { entries: [{ angle: 'cost', file: `../../${outside}/secret.json`, created_by: 'E0', timestamp: '' }] };
    writeFileSync(join(other, 'explorations', 'cache-index.json'), JSON.stringify(index));
    expect(new ExplorationCache(new SessionWriter(other)).lookup('Cost')).toBeUndefined();
  });
});

describe('a session whose artifacts/ is a symlink to a folder outside it', () => {
  // Needs src/knowledge/artifacts.ts to write through sessionPathForWrite (RELIABILITY.md, "Paths").
  it('refuses the write: the task fails with a clear error, the run goes on, nothing is written outside', async () => {
    const outside = outsideFolder();
    const long = 'x'.repeat(600); // over 500 characters: written whole to artifacts/<id>/output.md
    const dir = buildSession([
      { id: 'LONG', description: resultText({ findings: long }), role: 'r' },
      { id: 'NAMED', description: resultText({ findings: 'short', artifacts: [{ name: 'notes', content: 'n' }] }), role: 'r' },
      { id: 'PLAIN', description: resultText({ findings: 'plain' }), role: 'r' },
      { id: 'AFTER', description: resultText({ findings: 'after' }), role: 'r', deps: 'PLAIN' },
    ]);
    symlinkSync(outside, join(dir, 'artifacts'));
    const result = await runCli('run', dir, '--cmd', 'printf %s {description}', '--retries', '0');
    expect(result.code).toBe(1);
    const byId = readRows(dir);
    for (const id of ['LONG', 'NAMED']) {
      expect(byId.get(id), id).toMatchObject({ status: 'failed' });
      expect(byId.get(id)!.error, id).toMatch(/Refused to write artifacts\/.* artifacts is a symlink to .*, outside the session folder/);
    }
    expect(byId.get('PLAIN')).toMatchObject({ status: 'completed', findings: 'plain' });
    expect(byId.get('AFTER')).toMatchObject({ status: 'completed', findings: 'after' });
    expect(readdirSync(outside)).toEqual([]);
  });
});
