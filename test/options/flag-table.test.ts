import { Command, type Option } from 'commander';
import { describe, expect, test } from 'vitest';
import { kDefaultRedisTimeoutMs } from '../../src/backend/bullmq/bullmq-backend.js';
import { kDefaultMaxSessions } from '../../src/backend/bullmq/session/session-registry.js';
import { kAgentTypes, kExecutorTypes } from '../../src/backend/bullmq/trust/job-admission.js';
import { backendFromFlags } from '../../src/cli/backend-flag.js';
import { main } from '../../src/cli/main.js';
import { registerStatus } from '../../src/cli/commands/status.js';
import { registerWorker } from '../../src/cli/commands/worker.js';
import { addRunFlags } from '../../src/cli/run-flags.js';
import { attributeOf, tableFlag } from '../../src/cli/table-flags.js';
import { flagOptionEntries, kFlagOptionTable, type OptionCommand, type OptionDefinition } from '../../src/option-table.js';
import { kMaxTimerSeconds } from '../../src/process/timer-range.js';
import { expectWaveError } from '../helpers/wave-error.js';

// Issue 23 item 1: the backend's and the worker's flags were defined, defaulted and checked
// by hand in backend-flag.ts, worker.ts, rate.ts and the bullmq backend. They come from the
// options table now (option-table.ts' kFlagOptionTable), and so does status's --redis;
// these tests fail when one drifts.

/** The options commander holds for a command, by their flags. */
function optionsOf(name: OptionCommand): Map<string, Option> {
  const program = new Command('csv-wave');
  const io = { stdout: () => {}, stderr: () => {} };
  if (name === 'worker') registerWorker(program, io, () => {});
  else if (name === 'status') registerStatus(program, io, () => {});
  const command = program.commands[0] ?? addRunFlags(new Command(name));
  return new Map(command.options.map((option) => [option.flags, option]));
}

/** `csv-wave worker` in process, with no secret needed: its exit code and stderr. */
async function worker(...flags: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const saved = process.env['CSV_WAVE_SECRET'];
  delete process.env['CSV_WAVE_SECRET'];
  try {
    const code = await main(['worker', '--redis', 'redis://127.0.0.1:1', '--insecure-no-secret', ...flags], { stdout: () => {}, stderr: (text) => (stderr += text) });
    return { code, stderr };
  } finally {
    if (saved !== undefined) process.env['CSV_WAVE_SECRET'] = saved;
  }
}

describe('the backend and worker flags, from the table', () => {
  test.each(['run', 'resume', 'rerun', 'worker', 'status'] as const)('%s --help shows each of its flags with the doc line and default of the table', (name) => {
    const options = optionsOf(name);
    const mine = flagOptionEntries().filter(([, definition]) => definition.commands.includes(name));
    expect(mine.length).toBeGreaterThan(0);
    for (const [key, definition] of mine) {
      const option = options.get(definition.flag!);
      expect(option, key).toBeDefined();
      expect(option!.description, key).toBe(`${definition.doc} (default ${definition.defaultText})`);
      if (definition.choices !== undefined) expect(option!.argChoices, key).toEqual([...definition.choices]);
    }
    // The worker has no flag of its own outside the table.
    if (name === 'worker') expect([...options.keys()].sort()).toEqual(mine.map(([, definition]) => definition.flag!).sort());
  });

  test('status --redis keeps the help it had before it moved into the table', () => {
    expect(optionsOf('status').get('--redis <url>')?.description).toBe(
      "a session running with --backend bullmq: the Redis to ask which worker runs each task (default session.json's backend url, else CSV_WAVE_REDIS_URL)",
    );
  });

  test('the defaults the code falls back on are the table\'s', () => {
    expect(kDefaultRedisTimeoutMs).toBe(kFlagOptionTable.redisTimeoutSeconds.default! * 1000);
    expect(kDefaultMaxSessions).toBe(kFlagOptionTable.maxSessions.default);
    // Agents are offered only when --executors names them.
    expect([...kExecutorTypes].filter((type) => !(kAgentTypes as readonly string[]).includes(type))).toEqual(kFlagOptionTable.executors.default);
  });

  test('each bound is the table\'s: the last value inside is taken, the first outside refused, named by its flag', () => {
    const bounds: Array<[OptionDefinition, string, string]> = [
      [kFlagOptionTable.redisTimeoutSeconds, String(kMaxTimerSeconds), String(kMaxTimerSeconds + 1)],
      [kFlagOptionTable.redisTimeoutSeconds, '0.001', '0'],
      [kFlagOptionTable.stalledIntervalSeconds, String(kMaxTimerSeconds), String(kMaxTimerSeconds + 1)],
      [kFlagOptionTable.stalledIntervalSeconds, '0.5', '0'],
      [kFlagOptionTable.workerConcurrency, '1', '0'],
      [kFlagOptionTable.workerConcurrency, '3', '1.5'],
      [kFlagOptionTable.maxSessions, '1', '0'],
      [kFlagOptionTable.rate, '1/min', '0/s'],
      [kFlagOptionTable.executors, 'module', 'module,shell'],
      [kFlagOptionTable.sessionId, 'a.b_c-1', 'a:b'],
    ];
    for (const [definition, inside, outside] of bounds) {
      const attribute = attributeOf(definition);
      expect(tableFlag(definition, { [attribute]: inside }), definition.flag).toBeDefined();
      expectWaveError(() => tableFlag(definition, { [attribute]: outside }), {
        code: 'USAGE',
        message: new RegExp(`^Expected \`${definition.flag!.split(' ')[0]}\` to be `),
      });
    }
  });

  test('run: --redis-timeout is refused in the table\'s words, naming the flag', () => {
    expectWaveError(() => backendFromFlags({ backend: 'bullmq', redis: 'redis://127.0.0.1:1', redisTimeout: '0' }), {
      code: 'USAGE',
      message: `Expected \`--redis-timeout\` to be ${kFlagOptionTable.redisTimeoutSeconds.what}, got \`0\``,
    });
    expect(backendFromFlags({ backend: 'bullmq', redis: 'redis://127.0.0.1:1', redisTimeout: '5', rate: '20/s' })).toEqual({
      backend: { type: 'bullmq', url: 'redis://127.0.0.1:1', rate: { max: 20, durationMs: 1000 } },
      redisTimeoutSeconds: 5,
    });
  });

  test.each([
    [['--concurrency', '0'], `Expected \`--concurrency\` to be ${kFlagOptionTable.workerConcurrency.what}, got \`0\``],
    [['--stalled-interval', '-1'], `Expected \`--stalled-interval\` to be ${kFlagOptionTable.stalledIntervalSeconds.what}, got \`-1\``],
    [['--max-sessions', '2.5'], `Expected \`--max-sessions\` to be ${kFlagOptionTable.maxSessions.what}, got \`2.5\``],
    [['--executors', ''], `Expected \`--executors\` to be ${kFlagOptionTable.executors.what}, got \`\``],
  ])('worker %j is exit 2 before it reaches Redis, in the table\'s words', async (flags, message) => {
    const run = await worker(...flags);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });
});
