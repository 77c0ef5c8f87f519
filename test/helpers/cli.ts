import { main } from '../../src/cli/main.js';
// Sets CSV_WAVE_SECRET for the bullmq runs and workers started in process.
import './test-secret.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process through main(argv), capturing what it prints. */
export async function runCli(...argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}
