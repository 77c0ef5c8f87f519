import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';
import { kGeneratedCases } from './generated-cases.js';

/**
 * Each `<name>.csv` here is one test: copied into a fresh session folder as tasks.csv (with
 * `<name>.session.json` as session.json when there is one), it must fail `csv-wave validate`
 * with exit code 2 and exactly the stderr lines of `<name>.expected`, the session's paths
 * shown as `tasks.csv` and `session.json`, no stack trace, and leave the folder as it was:
 * the same files, byte for byte. Files under good/ must pass, printing `<name>.expected`
 * on stdout, with the same care for the folder. Cases whose bytes cannot sit in the
 * repository (not UTF-8, or megabytes) are built by generated-cases.ts and checked the same way.
 */
const kCorpusDir = fileURLToPath(new URL('./', import.meta.url));
const kGoodDir = join(kCorpusDir, 'good');

function caseNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.csv'))
    .map((file) => file.slice(0, -'.csv'.length))
    .sort();
}

/** A stored case: its files, byte for byte, and its expected lines. */
function storedCase(dir: string, name: string): { tasks: Buffer; session: Buffer | undefined; expected: string[] } {
  const sessionJson = join(dir, `${name}.session.json`);
  return {
    tasks: readFileSync(join(dir, `${name}.csv`)),
    session: existsSync(sessionJson) ? readFileSync(sessionJson) : undefined,
    expected: linesOf(readFileSync(join(dir, `${name}.expected`), 'utf8')),
  };
}

/** The lines of a text, without the empty string after the final newline. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Replaces a session file's path as the CLI shows it (absolute, or relative to the working
 * folder) with its bare name.
 */
function withPlainPath(line: string, dir: string): string {
  for (const name of ['tasks.csv', 'session.json']) {
    const path = join(dir, name);
    for (const shown of [path, relative(process.cwd(), path)]) {
      if (line.startsWith(`${shown}:`)) return `${name}${line.slice(shown.length)}`;
    }
  }
  return line;
}

/** Every file in the folder with its bytes. */
function snapshot(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).sort().map((file) => [file, readFileSync(join(dir, file))]));
}

function expectUnchanged(dir: string, before: Map<string, Buffer>): void {
  const after = snapshot(dir);
  expect([...after.keys()]).toEqual([...before.keys()]);
  for (const [file, bytes] of before) expect(after.get(file)!.equals(bytes), `${file} changed`).toBe(true);
}

/** A stack frame line, as Node prints them. */
const kStackFrame = /^\s+at /m;

async function expectRejected(name: string, files: { tasks: Buffer; session: Buffer | undefined; expected: string[] }) {
  const dir = buildSession(files.tasks, { session: files.session ?? null, prefix: `csv-wave-corpus-${name}-` });
  const before = snapshot(dir);

  const result = await runCli('validate', dir);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).not.toMatch(kStackFrame);
  expect(result.stderr.endsWith('\n')).toBe(true);
  expect(linesOf(result.stderr).map((line) => withPlainPath(line, dir))).toEqual(files.expected);

  // The same problems, as data: one violation per line, or the error alone when it has none.
  const json = await runCli('validate', dir, '--json');
  expect(json.code).toBe(2);
  expect(json.stderr).toBe('');
  const document = JSON.parse(json.stdout) as {
    ok: boolean;
    error: string;
    violations: { file: string; line: number; message: string }[];
  };
  expect(document.ok).toBe(false);
  const lines =
    document.violations.length > 0
      ? document.violations.map((v) => `${withPlainPath(`${v.file}:`, dir)}${v.line}: ${v.message}`)
      : [withPlainPath(document.error, dir)];
  expect(lines).toEqual(files.expected);

  expectUnchanged(dir, before);
}

async function expectAccepted(name: string, files: { tasks: Buffer; session: Buffer | undefined; expected: string[] }) {
  const dir = buildSession(files.tasks, { session: files.session ?? null, prefix: `csv-wave-corpus-${name}-` });
  const before = snapshot(dir);
  const result = await runCli('validate', dir);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(linesOf(result.stdout)).toEqual(files.expected);
  expectUnchanged(dir, before);
}

const kBadCases = caseNames(kCorpusDir);
const kGoodCases = caseNames(kGoodDir);

describe('corpus of bad tasks.csv files', () => {
  test.each(kBadCases)('%s', async (name) => {
    await expectRejected(name, storedCase(kCorpusDir, name));
  });
});

describe('corpus of good tasks.csv files', () => {
  test.each(kGoodCases)('%s', async (name) => {
    await expectAccepted(name, storedCase(kGoodDir, name));
  });
});

describe('generated corpus cases (bytes that are not UTF-8 text, and big files)', () => {
  test.each(kGeneratedCases.map((c) => [c.name, c] as const))('%s', async (name, generated) => {
    const { tasks, session, expected } = generated.build();
    const files = { tasks, session, expected };
    if (generated.code === 2) await expectRejected(name, files);
    else await expectAccepted(name, files);
  });
});

describe('the corpus itself', () => {
  test('every case has its expected output, and every expected output its case', () => {
    for (const dir of [kCorpusDir, kGoodDir]) {
      const files = readdirSync(dir);
      const csv = caseNames(dir);
      const expected = files.filter((file) => file.endsWith('.expected')).map((file) => file.slice(0, -'.expected'.length));
      expect(expected.sort()).toEqual(csv);
      for (const file of files.filter((f) => f.endsWith('.session.json'))) {
        expect(csv).toContain(file.slice(0, -'.session.json'.length));
      }
    }
  });

  test('no two cases share a name (each failure names one case)', () => {
    const names = [...kBadCases, ...kGoodCases.map((name) => `good/${name}`), ...kGeneratedCases.map((c) => c.name)];
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });

  test('every message of DESIGN.md section 3 has at least one case', () => {
    const generated = kGeneratedCases.filter((c) => c.code === 2);
    const messages = [
      ...kBadCases.flatMap((name) => linesOf(readFileSync(join(kCorpusDir, `${name}.expected`), 'utf8'))),
      ...generated.flatMap((c) => c.build().expected),
    ];
    const rules = [
      'Duplicate task ID: ',
      'Invalid task ID: ',
      'Unknown dependency: ',
      'Self-dependency: ',
      'Circular dependency detected involving: ',
      'Invalid context_from: ',
      'Invalid exec_mode: ',
      'Empty description for task: ',
      'Invalid status: ',
      'Invalid role: ',
      'Invalid gc_round: ',
      'Cross-mechanism dependency unresolvable: ',
      'Invalid priority: ',
      'CSV parse error: ',
      'Missing required column: ',
      'Duplicate column: ',
      'NUL byte at byte ',
      'Invalid UTF-8 at byte ',
      'The file is UTF-16 ',
      'Cell too long in column ',
      'Too many rows: ',
      'Unknown key: ',
      'not valid JSON: ',
    ];
    for (const rule of rules) expect(messages.some((line) => line.includes(`: ${rule}`)), rule).toBe(true);
    expect(kGoodCases).toContain('header-only');
  });
});
