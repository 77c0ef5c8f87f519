import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const kContenders = 8;
const kRounds = 200;
const kFixture = fileURLToPath(new URL('../fixtures/lock-contender.mjs', import.meta.url));
const kLockModule = fileURLToPath(new URL('../../src/session/lock.ts', import.meta.url));

async function deadPid(): Promise<number> {
  const dead = spawn('true');
  return new Promise((resolve, reject) => {
    dead.on('error', reject);
    dead.on('exit', () => resolve(dead.pid!));
  });
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('session lock under contention', () => {
  it.runIf(process.platform === 'linux')(
    `${kContenders} processes woken at one instant over a stale lock: exactly one holds it, in each of ${kRounds} rounds`,
    async () => {
      const base = mkdtempSync(join(tmpdir(), 'csv-wave-lock-race-'));
      const stale = JSON.stringify({ pid: await deadPid(), hostname: hostname(), started: new Date(0).toISOString() });
      for (let round = 0; round < kRounds; round++) {
        mkdirSync(join(base, `round-${round}`, '.csv-wave'), { recursive: true });
        writeFileSync(join(base, `round-${round}`, '.csv-wave', 'lock'), stale);
      }
      // Outcomes by round, filled as the contenders print them.
      const outcomes: string[][] = Array.from({ length: kRounds }, () => []);
      let roundDone: (() => void) | undefined;
      const fifos: number[] = [];
      for (let index = 0; index < kContenders; index++) {
        const fifo = join(base, `go-${index}`);
        execFileSync('mkfifo', [fifo]);
        fifos.push(openSync(fifo, 'r+'));
        const child = spawn(process.execPath, ['--import', 'tsx', kFixture, kLockModule, fifo, base], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        children.push(child);
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const [round, ...outcome] = line.split(' ');
          const list = outcomes[Number(round)]!;
          list.push(outcome.join(' '));
          if (list.length === kContenders) roundDone?.();
        });
      }
      for (let round = 0; round < kRounds; round++) {
        const done = new Promise<void>((resolve) => (roundDone = resolve));
        for (const fd of fifos) writeSync(fd, 'g');
        await done;
      }
      for (const fd of fifos) writeSync(fd, 'q');
      const holders = outcomes.map((list) => list.filter((outcome) => outcome === 'held').length);
      const errors = outcomes.flat().filter((outcome) => outcome !== 'held' && outcome !== 'refused');
      expect(errors).toEqual([]);
      const wrong = holders.flatMap((count, round) => (count === 1 ? [] : [`round ${round}: ${count} holders`]));
      expect(wrong).toEqual([]);
    },
    120_000,
  );
});
