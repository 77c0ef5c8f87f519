import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { readRows, tasksCsv } from '../helpers/generic-session.js';
import { kBinPath } from '../helpers/spawn-cli.js';

const run = promisify(execFile);
const kRepo = fileURLToPath(new URL('../../', import.meta.url));
const kReadme = readFileSync(join(kRepo, 'README.md'), 'utf8');

/** The one fenced block of this language in the README that contains `marker`. */
function readmeBlock(language: string, marker: string): string {
  const blocks = [...kReadme.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))]
    .map((match) => match[1]!)
    .filter((block) => block.includes(marker));
  expect(blocks, `README blocks of ${language} with ${marker}`).toHaveLength(1);
  return blocks[0]!;
}

// The README's examples as a reader copies them: only the package name (not installed in
// a temporary folder) and the session paths are put in.
describe("the README's code examples run as written", () => {
  test('the library example prints each task as it is done, then the exit code', async () => {
    const code = readmeBlock('ts', 'await runSession(');
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

  test('the analyze example with samples/answers.json: continue, adjust with a new focus, done', async () => {
    const script = readmeBlock('sh', '--answers');
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-readme-')), 'an');
    const shell = script.replaceAll('/tmp/an', dir).replaceAll('npx csv-wave', `node ${kBinPath}`);
    // From the repository folder, where the README's relative paths point; `$PWD` as the shell sets it.
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
});
