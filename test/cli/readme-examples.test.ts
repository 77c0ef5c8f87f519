import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { readRows, tasksCsv } from '../helpers/session-builder.js';
import { docBlocks } from '../helpers/readme.js';
import { kBinPath } from '../helpers/spawn-cli.js';

const run = promisify(execFile);
const kRepo = fileURLToPath(new URL('../../', import.meta.url));
/** The one fenced block of this language in a page of the docs that contains `marker`. */
function docBlock(page: string, language: string, marker: string): string {
  const blocks = docBlocks(page, language).filter((block) => block.includes(marker));
  expect(blocks, `${page} blocks of ${language} with ${marker}`).toHaveLength(1);
  return blocks[0]!;
}

// The examples of the README and docs/ as a reader copies them: only the package name (not
// installed in a temporary folder) and the session paths are put in.
describe('the code examples of the README and docs/ run as written', () => {
  test('docs/library.md: the library example prints each task as it is done, then the exit code', async () => {
    const code = docBlock('docs/library.md', 'ts', 'await runSession(');
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-readme-'));
    mkdirSync(join(root, 'my-session'));
    writeFileSync(
      join(root, 'my-session', 'tasks.csv'),
      tasksCsv([
        { id: 'A', description: 'first', role: 'r' },
        { id: 'B', description: 'second', role: 'r', deps: 'A' },
      ]),
    );
    writeFileSync(join(root, 'my-session', 'session.json'), '{"pipeline":"generic"}');
    const entry = pathToFileURL(join(kRepo, 'dist', 'index.js')).href;
    writeFileSync(join(root, 'example.mjs'), code.replace("from 'csv-wave'", `from '${entry}'`));
    const { stdout } = await run(process.execPath, ['example.mjs'], { cwd: root });
    expect(stdout).toBe('A completed A\nB completed B\n0 ran to the end\n');
  });

  test('docs/pipelines.md: the analyze example with samples/answers.json: continue, adjust with a new focus, done', async () => {
    const script = docBlock('docs/pipelines.md', 'sh', '--answers samples/answers.json');
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-readme-')), 'an');
    const shell = script.replaceAll('/tmp/an', dir).replaceAll('npx csv-wave', `node ${kBinPath}`);
    // From the repository folder, where the page's relative paths point; `$PWD` as the shell sets it.
    await run('/bin/sh', ['-e', '-c', shell], { cwd: kRepo, env: { ...process.env, PWD: kRepo } });
    const rows = readRows(dir);
    expect([...rows.values()].every((row) => row.status === 'completed'), JSON.stringify([...rows.keys()])).toBe(true);
    // Continue added round 2; Adjust added the supplementary analysis with the new focus and round 3; Done ended it.
    expect([...rows.keys()].filter((id) => id.startsWith('DISCUSS-') || id.startsWith('ANALYZE-fix'))).toEqual([
      'DISCUSS-001',
      'DISCUSS-002',
      'ANALYZE-fix-2',
      'DISCUSS-003',
    ]);
    expect(readFileSync(join(dir, 'discussion.md'), 'utf8')).toContain('focus on costs');
  });

  test('docs/pipelines.md: the lifecycle sample runs a copy, through the gate, an injection, a route and a fix', async () => {
    const script = docBlock('docs/pipelines.md', 'sh', 'samples/lifecycle');
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-readme-'));
    const shell = script.replaceAll('/tmp/', `${root}/`).replaceAll('npx csv-wave', `node ${kBinPath}`);
    const { stdout } = await run('/bin/sh', ['-e', '-c', shell], { cwd: kRepo });
    const rows = readRows(join(root, 'lifecycle'));
    expect(rows.get('REVIEW-001')!.status).toBe('completed');
    expect(rows.get('ARCH-001')!.error).toBe('Skipped: not chosen (PLAN-001: orchestrated)');
    expect(stdout).toContain('[INJECT] SECURITY-001 after PLAN-001: keyword "OWASP"');
    expect(readFileSync(join(kRepo, 'samples', 'lifecycle', 'tasks.csv'), 'utf8')).not.toContain('completed');
  });

  test('README.md: the plain batch example starts, runs, lists failures and reruns them', async () => {
    const script = docBlock('README.md', 'sh', '--template generic');
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-readme-')), 'batch');
    const shell = script.replaceAll('/tmp/batch', dir).replaceAll('npx csv-wave', `node ${kBinPath}`);
    const { stdout } = await run('/bin/sh', ['-e', '-c', shell], { cwd: kRepo });
    const rows = readRows(dir);
    expect([...rows.values()].map((row) => row.status)).toEqual(['completed', 'completed', 'completed']);
    expect(rows.get('REPORT-001')!.findings).toMatch(/^reporter REPORT-001: Sum up/);
    // The rerun of no failure runs nothing.
    expect(stdout).toContain('Nothing to run');
  });

  test('README.md: the sample command runs a copy of samples/wordfreq; the sample stays as it is, and a second run writes nothing', async () => {
    const first = docBlocks('README.md', 'sh')[0]!.trim().split('\n');
    expect(first.slice(0, 2)).toEqual(['npm ci', 'npm test']);
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-readme-'));
    const sample = readFileSync(join(kRepo, 'samples', 'wordfreq', 'tasks.csv'));
    await run('/bin/sh', ['-e', '-c', first[2]!.replaceAll('/tmp/', `${root}/`).replaceAll('npx csv-wave', `node ${kBinPath}`)], { cwd: kRepo });
    const dir = join(root, 'wordfreq');
    expect([...readRows(dir).values()].every((row) => row.status === 'completed')).toBe(true);
    expect(readFileSync(join(kRepo, 'samples', 'wordfreq', 'tasks.csv')).equals(sample)).toBe(true);
    // Run again: nothing to run, and tasks.csv, context.md and report.html are left as they are.
    const outputs = ['tasks.csv', 'context.md', 'report.html'];
    const before = outputs.map((name) => [statSync(join(dir, name)).mtimeMs, readFileSync(join(dir, name), 'utf8')]);
    const again = await run(process.execPath, [kBinPath, 'run', dir], { cwd: kRepo });
    expect(again.stdout).toContain('Nothing to run: every task is finished');
    expect(outputs.map((name) => [statSync(join(dir, name)).mtimeMs, readFileSync(join(dir, name), 'utf8')])).toEqual(before);
  });

  test('README.md: the offline brainstorm runs a copy of samples/brainstorm', async () => {
    const line = /`(cp -r samples\/brainstorm [^`]+)`/.exec(readFileSync(join(kRepo, 'README.md'), 'utf8'))![1]!;
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-readme-'));
    const sample = readFileSync(join(kRepo, 'samples', 'brainstorm', 'tasks.csv'));
    await run('/bin/sh', ['-e', '-c', line.replaceAll('/tmp/', `${root}/`).replaceAll('npx csv-wave', `node ${kBinPath}`)], { cwd: kRepo });
    const rows = [...readRows(join(root, 'brainstorm')).values()];
    expect(rows.filter((row) => row.status === 'completed').length).toBeGreaterThan(5);
    expect(rows.every((row) => row.status === 'completed' || row.status === 'skipped')).toBe(true);
    expect(readFileSync(join(kRepo, 'samples', 'brainstorm', 'tasks.csv')).equals(sample)).toBe(true);
  });
});
