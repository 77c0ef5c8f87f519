import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';

/**
 * Each `<name>.csv` here is one test: copied into a fresh session folder as tasks.csv (with
 * `<name>.session.json` as session.json when there is one), it must fail `csv-wave validate`
 * with exit code 2 and exactly the stderr lines of `<name>.expected`, the tasks path shown
 * as `tasks.csv`, and leave the file untouched. Files under good/ must pass, printing
 * `<name>.expected` on stdout.
 */
const kCorpusDir = fileURLToPath(new URL('./', import.meta.url));
const kGoodDir = join(kCorpusDir, 'good');

function caseNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.csv'))
    .map((file) => file.slice(0, -'.csv'.length))
    .sort();
}

/** A session folder holding a byte-for-byte copy of the case's files. */
function sessionFor(dir: string, name: string): { dir: string; tasksPath: string } {
  const session = mkdtempSync(join(tmpdir(), `csv-wave-corpus-${name}-`));
  const tasksPath = join(session, 'tasks.csv');
  copyFileSync(join(dir, `${name}.csv`), tasksPath);
  const sessionJson = join(dir, `${name}.session.json`);
  if (existsSync(sessionJson)) copyFileSync(sessionJson, join(session, 'session.json'));
  return { dir: session, tasksPath };
}

/** The lines of a text, without the empty string after the final newline. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Replaces the tasks path as the CLI shows it (absolute, or relative to the working folder) with `tasks.csv`. */
function withPlainPath(line: string, tasksPath: string): string {
  for (const shown of [tasksPath, relative(process.cwd(), tasksPath)]) {
    if (line.startsWith(`${shown}:`)) return `tasks.csv${line.slice(shown.length)}`;
  }
  return line;
}

const kBadCases = caseNames(kCorpusDir);
const kGoodCases = caseNames(kGoodDir);

describe('corpus of bad tasks.csv files', () => {
  test.each(kBadCases)('%s', async (name) => {
    const expected = linesOf(readFileSync(join(kCorpusDir, `${name}.expected`), 'utf8'));
    const original = readFileSync(join(kCorpusDir, `${name}.csv`));
    const { dir, tasksPath } = sessionFor(kCorpusDir, name);

    const result = await runCli('validate', dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.endsWith('\n')).toBe(true);
    expect(linesOf(result.stderr).map((line) => withPlainPath(line, tasksPath))).toEqual(expected);

    // The same violations, as data.
    const json = await runCli('validate', dir, '--json');
    expect(json.code).toBe(2);
    expect(json.stderr).toBe('');
    const document = JSON.parse(json.stdout) as { ok: boolean; violations: { file: string; line: number; message: string }[] };
    expect(document.ok).toBe(false);
    expect(document.violations.map((v) => `${withPlainPath(`${v.file}:`, tasksPath)}${v.line}: ${v.message}`)).toEqual(
      expected,
    );

    expect(readFileSync(tasksPath).equals(original)).toBe(true);
  });
});

describe('corpus of good tasks.csv files', () => {
  test.each(kGoodCases)('%s', async (name) => {
    const original = readFileSync(join(kGoodDir, `${name}.csv`));
    const { dir, tasksPath } = sessionFor(kGoodDir, name);
    const result = await runCli('validate', dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(join(kGoodDir, `${name}.expected`), 'utf8'));
    expect(readFileSync(tasksPath).equals(original)).toBe(true);
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

  test('every message of DESIGN.md section 3 has at least one case', () => {
    const messages = kBadCases.flatMap((name) => linesOf(readFileSync(join(kCorpusDir, `${name}.expected`), 'utf8')));
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
    ];
    for (const rule of rules) expect(messages.some((line) => line.includes(`: ${rule}`)), rule).toBe(true);
    expect(kGoodCases).toContain('header-only');
  });
});
