import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

const run = promisify(execFile);
const kRepo = fileURLToPath(new URL('../../', import.meta.url));

/**
 * vitest's global setup: builds dist/ before any test file runs, and again before each
 * rerun in watch mode. The CLI tests spawn dist/cli/bin.js, and piscina loads
 * dist/executors/worker.js even when the engine itself runs from src/ under vitest, so a
 * dist/ older than src/ would be tested silently.
 */
export default async function setup(project: TestProject): Promise<void> {
  await buildDist();
  project.onTestsRerun(buildDist);
}

/**
 * `npm run build` is the one definition of a build (tsc, then the bin file's execute bit);
 * it is `tsc -b`, which does nothing when dist/ is newer than every source, so an
 * up-to-date dist/ costs about a second.
 */
async function buildDist(): Promise<void> {
  try {
    await run('npm', ['run', '--silent', 'build'], { cwd: kRepo, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '', code } = error as { stdout?: string; stderr?: string; code?: unknown };
    throw new Error(
      `\`npm run build\` failed (exit ${String(code)}) in ${kRepo}, so no test ran: the tests would run a stale dist/.\n` +
        `Fix the errors below (tsc's output), then run the tests again.\n${stdout}${stderr}`,
    );
  }
}
