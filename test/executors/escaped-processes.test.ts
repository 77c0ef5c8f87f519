import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { kCanFindEscaped, killEscapedProcesses } from '../../src/executors/escaped-processes.js';
import { isRunning, waitFor } from '../helpers/spawn-cli.js';

const kSetsid = kCanFindEscaped && existsSync('/usr/bin/setsid');

/**
 * Runs `script` in a shell of its own group, with `marker` in its environment, and
 * resolves with the shell's pid once it has exited (as the command executor sees a
 * command end).
 */
async function exitedShell(script: string, marker: readonly string[]): Promise<number> {
  const env = { ...process.env, ...Object.fromEntries(marker.map((entry) => entry.split('=') as [string, string])) };
  const shell = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore', env });
  await new Promise((resolve) => shell.on('exit', resolve));
  return shell.pid!;
}

describe.runIf(kSetsid)('killEscapedProcesses', () => {
  // Its threads get the ids right after it, so a short command's range of new pids holds
  // them; /proc answers for a thread id as for a process.
  test('a multi-threaded process that left the group is killed and counted once, not once per thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-escaped-'));
    const pidFile = join(dir, 'escaped.pid');
    const marker = [`CSV_WAVE_SESSION=${dir}`, `CSV_WAVE_TASK_ID=ESC${process.pid}`, 'CSV_WAVE_ATTEMPT=1'];
    const node = `${JSON.stringify(process.execPath)} -e 'require("fs").writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)'`;
    const shellPid = await exitedShell(`setsid ${node} ${pidFile} & while [ ! -s ${pidFile} ]; do sleep 0.01; done`, marker);
    const escaped = Number(readFileSync(pidFile, 'utf8'));
    const threads = Number(/^Threads:\s*(\d+)$/m.exec(readFileSync(`/proc/${escaped}/status`, 'utf8'))?.[1]);
    expect(threads).toBeGreaterThan(1);

    expect(killEscapedProcesses(shellPid, marker)).toBe(1);
    await waitFor(() => !isRunning(escaped), 'the escaped process to end');
  });

  test('a process that left the group is found among the few pids handed out after the shell', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-escaped-'));
    const pidFile = join(dir, 'escaped.pid');
    const marker = [`CSV_WAVE_SESSION=${dir}`, `CSV_WAVE_TASK_ID=ESC${process.pid}b`, 'CSV_WAVE_ATTEMPT=2'];
    const shellPid = await exitedShell(`setsid sh -c 'echo $$ > ${pidFile}; exec sleep 60' & while [ ! -s ${pidFile} ]; do sleep 0.01; done`, marker);
    const escaped = Number(readFileSync(pidFile, 'utf8'));
    expect(isRunning(escaped)).toBe(true);
    // Another attempt's marker finds nothing.
    expect(killEscapedProcesses(shellPid, [...marker.slice(0, 2), 'CSV_WAVE_ATTEMPT=3'])).toBe(0);
    expect(killEscapedProcesses(shellPid, marker)).toBe(1);
    await waitFor(() => !isRunning(escaped), 'the escaped process to end');
  });
});
