/**
 * Secrets given through the environment never reach tasks.csv, the journal, artifacts,
 * discoveries, wisdom, context.md, the log or error messages: a known key is put in the
 * environment of a run, every task echoes it somewhere, and afterwards no file of the
 * session and no line of output holds it, or any 8 characters of it.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { attachReporter } from '../../src/cli/progress.js';
import { RunEmitter } from '../../src/events/events.js';
import { runSession } from '../../src/run/run-session.js';
import type { ExecutorSpec } from '../../src/executors/messages.js';
import { scrubSecrets, secretValues } from '../../src/text/secret-scrubber.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { expectOthersIntact, hostileSession, kBystanders, kScriptOrOk } from './helpers.js';

const kKey = 'csvw-sk-live-0123456789abcdefABCDEF';
const kModulePath = new URL('./fixtures/hostile-module.mjs', import.meta.url).pathname;
const kSplitModulePath = new URL('./fixtures/split-secret-module.mjs', import.meta.url).pathname;

/** Every file under `dir`, recursively, with its text. */
function allFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(path, readFileSync(path, 'latin1'));
    }
  };
  walk(dir);
  return files;
}

/** The key or any 8 consecutive characters of it: a cut must not leave a piece either. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + 8 <= kKey.length; i++) if (text.includes(kKey.slice(i, i + 8))) found.push(kKey.slice(i, i + 8));
  return found;
}

/** Runs the session as the CLI would, capturing its log, every event and the journal as it was written. */
async function runCapturing(dir: string, executor: ExecutorSpec) {
  const events = new RunEmitter();
  let log = '';
  attachReporter(events, { stdout: (text) => (log += text), stderr: (text) => (log += text) }, 'lines');
  const seen: string[] = [];
  const journal: string[] = [];
  for (const name of ['task:start', 'task:retry', 'task:done', 'warning', 'run:done', 'wave:done'] as const) {
    events.on(name, (event: unknown) => {
      seen.push(JSON.stringify(event));
      // The journal is emptied at each checkpoint: read it while the entries are in it.
      if (name === 'task:done') setImmediate(() => journal.push(readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8')));
    });
  }
  const summary = await runSession(dir, { executor, events, retryBaseMs: 10 });
  return { summary, log, events: seen.join('\n'), journal: journal.join('') };
}

function expectNoLeak(dir: string, captured: { log: string; events: string; journal: string }): void {
  const files = allFiles(dir);
  expect(files.size).toBeGreaterThan(5);
  for (const [path, text] of files) expect(leaks(text), path).toEqual([]);
  expect(leaks(captured.log), 'log').toEqual([]);
  expect(leaks(captured.events), 'events').toEqual([]);
  expect(captured.journal).toContain('"type":"finish"');
  expect(leaks(captured.journal), 'journal').toEqual([]);
}

describe('secrets from the environment', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env['MY_API_KEY'];
    process.env['MY_API_KEY'] = kKey;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env['MY_API_KEY'];
    else process.env['MY_API_KEY'] = saved;
  });

  test('the scrubber: names that look secret, values of 8 characters or more, longest first', () => {
    const env = { MY_API_KEY: kKey, GITHUB_TOKEN: 'ghp_short1', DB_PASSWORD: 'pw', AUTH_HEADER: `Bearer ${kKey}`, HOME: '/home/someone' };
    expect(secretValues(env)).toEqual([`Bearer ${kKey}`, kKey, 'ghp_short1']);
    expect(scrubSecrets(`a ${kKey} b`)).toBe('a *** b');
  });

  test('a command that echoes the key into stdout, stderr, a discovery, an artifact, wisdom and every result field', async () => {
    const result = {
      findings: `${'long findings '.repeat(50)} ends with $MY_API_KEY`,
      gc_signal: 'REVISION_NEEDED $MY_API_KEY',
      severity_summary: 'CRITICAL=1 $MY_API_KEY',
      discoveries: [{ type: 'idea', data: { title: 'idea $MY_API_KEY', $MY_API_KEY: ['$MY_API_KEY'] } }],
      wisdom: { learnings: ['learned $MY_API_KEY'], issues: ['issue $MY_API_KEY'] },
      artifacts: [{ name: 'notes', content: '# notes\nkey: $MY_API_KEY\n' }],
      key_findings: ['key $MY_API_KEY'],
      decisions: ['decided $MY_API_KEY'],
      files_modified: ['$MY_API_KEY.txt'],
    };
    const dir = hostileSession({
      STDOUT: `echo "the key is $MY_API_KEY"`,
      STDERR: `echo "cannot log in with $MY_API_KEY" >&2; exit 3`,
      // An unquoted heredoc: the shell puts the key's value in.
      RICH: `cat <<EOF\n${JSON.stringify(result)}\nEOF`,
      REPORTED: `cat <<EOF\n${JSON.stringify({ status: 'failed', findings: 'half', error: 'gave up: $MY_API_KEY' })}\nEOF`,
      // A transient failure is retried: its error goes to the log on the way.
      RETRIED: `if [ "$CSV_WAVE_ATTEMPT" = 1 ]; then echo "try later $MY_API_KEY" >&2; exit 75; fi; echo recovered`,
      // The key across the 1 MiB stdout cut, and across the cut of a long stderr.
      CUTOUT: `head -c 1048560 /dev/zero | tr '\\0' y; printf '%s' "$MY_API_KEY"; head -c 100000 /dev/zero | tr '\\0' z`,
      CUTERR: `head -c 20000 /dev/zero | tr '\\0' q >&2; printf '%s' "$MY_API_KEY" >&2; head -c 1990 /dev/zero | tr '\\0' e >&2; exit 1`,
      INVALID: `printf '%s' "{\\"findings\\": \\"$MY_API_KEY"`,
    });
    const captured = await runCapturing(dir, { type: 'command', template: kScriptOrOk });
    expect(captured.summary.exitCode).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('STDOUT')!.findings).toBe('the key is ***');
    expect(rows.get('STDERR')!.error).toBe('Command exited with code 3: cannot log in with ***');
    expect(rows.get('RICH')).toMatchObject({ status: 'completed', gc_signal: 'REVISION_NEEDED ***', severity_summary: 'CRITICAL=1 ***' });
    expect(rows.get('REPORTED')!.error).toBe('gave up: ***');
    expect(rows.get('RETRIED')!.findings).toBe('recovered');
    expect(captured.log).toContain('try later ***');
    expect(readFileSync(join(dir, 'artifacts', 'RICH', 'notes.md'), 'utf8')).toBe('# notes\nkey: ***\n');
    expect(readFileSync(join(dir, 'artifacts', 'RICH', 'output.md'), 'utf8')).toMatch(/ends with \*\*\*$/);
    expect(readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')).toContain('{"title":"idea ***","***":["***"]}');
    expect(readFileSync(join(dir, 'wisdom', 'learnings.md'), 'utf8')).toBe('- [RICH] learned ***\n');
    expect(readFileSync(join(dir, 'discoveries', 'RICH.json'), 'utf8')).toContain('"key ***"');
    expect(readFileSync(join(dir, 'artifacts', 'CUTOUT', 'output.md'), 'utf8')).toContain('y***z');
    expect(rows.get('CUTERR')!.error).toMatch(/\*\*\*e{1990}$/);
    expect(rows.get('INVALID')!.status).toBe('failed');
    expectNoLeak(dir, captured);
    expectOthersIntact(dir);
  });

  test('a module that throws the key, or returns it, leaks it nowhere', async () => {
    const dir = buildSession([
      { id: 'THROW', description: 'secret-throw', role: 'r' },
      { id: 'THROWOBJ', description: 'secret-throw-object', role: 'r' },
      { id: 'RESULT', description: 'secret-result', role: 'r' },
      ...kBystanders,
    ]);
    const captured = await runCapturing(dir, { type: 'module', path: kModulePath });
    expect(captured.summary.exitCode).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('THROW')!.error).toBe('cannot authenticate with ***');
    expect(rows.get('THROWOBJ')!.error).toBe('Non-Error thrown: {"reason":"bad key","key":"***"}');
    expect(rows.get('RESULT')!.findings).toBe('the key is ***');
    expect(readFileSync(join(dir, 'artifacts', 'RESULT', 'leak.md'), 'utf8')).toBe('key=***\n');
    expectNoLeak(dir, captured);
    expectOthersIntact(dir);
  });
});

/** Every file under the session's artifacts/ folder, recursively, with its text. */
function artifactTexts(dir: string): string[] {
  return [...allFiles(join(dir, 'artifacts')).values()];
}

/**
 * Issue 9, defect 5: a secret split by a control character or an ANSI escape used to be
 * scrubbed before they were removed, which joined it again. Every destination is checked
 * by expectNoLeak (any 8 characters of the key, in every file and every line of output).
 */
describe('secrets split by control characters or ANSI escapes', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env['MY_API_KEY'];
    process.env['MY_API_KEY'] = kKey;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env['MY_API_KEY'];
    else process.env['MY_API_KEY'] = saved;
  });

  test('the scrubber finds a secret that control characters or escapes split', () => {
    const split = (between: string) => `${kKey.slice(0, 12)}${between}${kKey.slice(12)}`;
    for (const between of ['\x01', '\x7f', '\x9b', '\x1b[0m', '\x1b[38;5;196m', '\x1b]0;title\x07', '\x1b]8;;http://x\x1b\\', '\x1bc']) {
      expect(scrubSecrets(`a ${split(between)} b`), JSON.stringify(between)).toBe('a *** b');
    }
    // Text without a hidden secret keeps its escapes (artifacts are written as produced).
    expect(scrubSecrets(`\x1b[1mbold\x1b[0m ${kKey}`)).toBe('\x1b[1mbold\x1b[0m ***');
  });

  test('a command that splits the key in stdout, stderr, every result field, an artifact, and invalid JSON', async () => {
    // A and B: the key's halves, from the environment (the scripts are in the session folder).
    const halves = `A=$(printf %s "$MY_API_KEY" | cut -c1-12); B=$(printf %s "$MY_API_KEY" | cut -c13-); `;
    const result = {
      findings: `${'long findings '.repeat(50)} ends with $A\\u0001$B`,
      gc_signal: 'REVISION_NEEDED $A\\u001b[0m$B',
      severity_summary: 'CRITICAL=1 $A\\u0007$B',
      discoveries: [{ type: 'idea', data: { title: 'idea $A\\u001b[31m$B', '$A\\u0002$B': ['$A\\u0003$B'] } }],
      wisdom: { learnings: ['learned $A\\u0004$B'], decisions: ['decided $A\\u001b]0;t\\u0007$B'] },
      artifacts: [{ name: 'notes', content: '# notes\\nkey: $A\\u001b[0m$B\\n' }],
      key_findings: ['key $A\\u0005$B'],
      error: 'half done: $A\\u0006$B',
    };
    const dir = hostileSession({
      CTRL: `${halves}printf 'the key is %s\\001%s\\n' "$A" "$B"`,
      ANSI: `${halves}printf 'the key is %s\\033[1;31m%s\\033[0m\\n' "$A" "$B"`,
      STDERR: `${halves}printf 'cannot log in with %s\\033]0;title\\007%s\\n' "$A" "$B" >&2; exit 3`,
      RETRIED: `${halves}if [ "$CSV_WAVE_ATTEMPT" = 1 ]; then printf 'try later %s\\002%s\\n' "$A" "$B" >&2; exit 75; fi; echo recovered`,
      // An unquoted heredoc: the shell puts the halves in.
      RICH: `${halves}cat <<EOF\n${JSON.stringify(result)}\nEOF`,
      // V8's JSON error quotes the text around the error, a piece of the key with it.
      V8KEY: `printf '{"%s": x}' "$MY_API_KEY"`,
      V8VALUE: `printf '{"findings": "x", "note": "%s", x}' "$MY_API_KEY"`,
    });
    const captured = await runCapturing(dir, { type: 'command', template: kScriptOrOk });
    expect(captured.summary.exitCode).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('CTRL')!.findings).toBe('the key is ***');
    expect(rows.get('ANSI')!.findings).toBe('the key is ***');
    expect(rows.get('STDERR')!.error).toBe('Command exited with code 3: cannot log in with ***');
    expect(rows.get('RETRIED')!.findings).toBe('recovered');
    expect(captured.log).toContain('try later ***');
    expect(rows.get('RICH')).toMatchObject({ gc_signal: 'REVISION_NEEDED ***', severity_summary: 'CRITICAL=1 ***', error: 'half done: ***' });
    expect(readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')).toContain('{"title":"idea ***","***":["***"]}');
    expect(readFileSync(join(dir, 'wisdom', 'learnings.md'), 'utf8')).toBe('- [RICH] learned ***\n');
    expect(readFileSync(join(dir, 'wisdom', 'decisions.md'), 'utf8')).toBe('- [RICH] decided ***\n');
    expect(readFileSync(join(dir, 'discoveries', 'RICH.json'), 'utf8')).toContain('"key ***"');
    const artifacts = artifactTexts(dir);
    expect(artifacts).toContain('# notes\nkey: ***\n');
    expect(artifacts.some((text) => text.endsWith('ends with ***'))).toBe(true);
    for (const id of ['V8KEY', 'V8VALUE']) {
      const error = rows.get(id)!.error;
      expect(error).toMatch(/^Invalid output: stdout starts like a JSON result but is not valid JSON/);
      // Not even the few characters of the key a whole-key scrubber cannot recognise.
      for (let i = 0; i + 4 <= kKey.length; i++) expect(error, id).not.toContain(kKey.slice(i, i + 4));
    }
    expect(readFileSync(join(dir, 'context.md'), 'utf8')).toContain('***');
    expectNoLeak(dir, captured);
    expectOthersIntact(dir);
  });

  test('a module that splits the key in a thrown error, its result, a discovery key, wisdom and an artifact', async () => {
    const dir = buildSession([
      { id: 'THROW', description: 'split-throw', role: 'r' },
      { id: 'RESULT', description: 'split-result', role: 'r' },
      ...kBystanders,
    ]);
    const captured = await runCapturing(dir, { type: 'module', path: kSplitModulePath });
    expect(captured.summary.exitCode).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('THROW')!.error).toBe('cannot authenticate with ***');
    expect(rows.get('RESULT')!.findings).toBe('the key is ***');
    expect(readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')).toContain('"data":{"***":"***"}');
    expect(readFileSync(join(dir, 'wisdom', 'issues.md'), 'utf8')).toContain('- [RESULT] leaked ***\n');
    // The artifact hid the key behind an escape: it is written cleaned, escapes and all.
    expect(artifactTexts(dir)).toContain('key=***\n');
    expectNoLeak(dir, captured);
    expectOthersIntact(dir);
  });
});
