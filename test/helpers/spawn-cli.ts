import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TestRunner } from 'vitest';
// Sets CSV_WAVE_SECRET, which every spawned CLI inherits.
import './test-secret.js';

/** The built CLI: tests that kill a run, or need a second process, spawn it. */
export const kBinPath = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

export interface SpawnedCli {
  child: ChildProcess;
  /** What the process printed on stderr so far. */
  stderrSoFar(): string;
  /** What the process printed on stdout so far. */
  stdoutSoFar(): string;
  /** Resolves when the process has exited, with what it printed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/**
 * How to start the CLI: extra environment (a variable set to undefined is removed), and the
 * user to run it as (a root test that needs permissions to count).
 */
export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  uid?: number;
  gid?: number;
}

/** Starts `node dist/cli/bin.js ...argv` as a child process (vitest's global setup builds dist/). */
export function spawnCli(...argv: string[]): SpawnedCli {
  return spawnCliWith({}, ...argv);
}

/** spawnCli with an environment added to this process's, or as another user. */
export function spawnCliWith(options: SpawnOptions, ...argv: string[]): SpawnedCli {
  if (!existsSync(kBinPath)) throw new Error(`${kBinPath} is missing: build with \`npm run build\``);
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn(process.execPath, [kBinPath, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    },
  );
  return { child, exited, stderrSoFar: () => stderr, stdoutSoFar: () => stdout };
}

/**
 * Polls until `condition` holds; fails after `limitMs` (a safety net, not a timing assertion).
 * By default the net is what is left of the running test's own timeout, less a second, so
 * that a wait that never ends fails naming what it waited for. A fixed net shorter than the
 * test's failed tests on a loaded machine that were only slow: a CLI that starts in half a
 * second alone took over 20 s at a load average of 30 on two cores.
 */
export async function waitFor(condition: () => boolean, what: string, limitMs = restOfTestTimeout()): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what}`);
    await sleep(20);
  }
}

/** The net of a wait outside a test (a hook): vitest's hookTimeout of vitest.config.ts, less a second. */
const kNetOutsideTestMs = 119_000;

/** Milliseconds until a second before the running test's timeout (vitest's `startTime` is Date.now()). */
function restOfTestTimeout(): number {
  const test = TestRunner.getCurrentTest();
  const started = test?.result?.startTime;
  if (test === undefined || started === undefined) return kNetOutsideTestMs;
  return Math.max(1_000, started + test.timeout - 1_000 - Date.now());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * True while `pid` runs code: it exists (ours or not) and is not a zombie, killed and
 * waiting for its new parent to reap it. Where there is no /proc, a process that exists runs.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return !existsSync('/proc/self');
  }
}
