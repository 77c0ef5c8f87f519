import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { BullmqBackend } from '../../src/backend/bullmq/bullmq-backend.js';
import { sealReply } from '../../src/backend/bullmq/trust/job-admission.js';
import { queueNameOf } from '../../src/backend/bullmq/jobs/names.js';
import { requestDigest, Signing } from '../../src/backend/bullmq/trust/signing.js';
import { finishAttempt } from '../../src/executors/finish-attempt.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import type { TaskResultInput } from '../../src/schema/result.js';
import { lines, redisForFile } from '../helpers/bullmq-session.js';
import { forgeReplies, hostileText, kControl, kEscapes, unruledReply, type ForgedReplies } from '../helpers/forged-reply.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { readCsvRecords } from '../helpers/test-files.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { sleep, spawnCliWith } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';

const kSecret = 'sk-live-HOSTILE-REPLY-0123456789';
/** The coordinator's environment holds the secret, as a worker's might: it must reach no file and no line. */
const kEnv = { CSV_WAVE_TEST_TOKEN: kSecret };
/** The longest cell a spreadsheet holds. */
const kCellLimit = 32_767;

/** Every file under `dir`, with its text. */
function filesOf(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => ({ path, text: readFileSync(path, 'utf8') }));
}

/** The reply text a worker that skipped every rule would return for task `request`'s raw result. */
function unruled(request: AttemptRequest, result: TaskResultInput): string {
  return JSON.stringify(unruledReply(request.task.id, request.task.row.role ?? '', result));
}

/** Does `act` until `done` holds, a look each 50 ms; fails after 60 s (a safety net, not a timing assertion). */
async function until(done: () => boolean, what: string, act: () => Promise<unknown>): Promise<void> {
  for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
    await act();
    if (done()) return;
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what}`);
  }
}

/** Runs the session's coordinator while `answer` forges each job's reply; resolves with its exit and output. */
async function runAgainst(url: string, sessionId: string, dir: string, answer: (request: AttemptRequest) => string) {
  let forged: ForgedReplies | undefined;
  try {
    forged = await forgeReplies(url, sessionId, answer, kTestSecret);
    const coordinator = spawnCliWith({ env: kEnv }, 'run', dir, '--cmd', 'true', '--backend', 'bullmq', '--redis', url);
    const ran = await coordinator.exited;
    return { ...ran, answered: forged.answered };
  } finally {
    await forged?.stop();
  }
}

const redis = redisForFile();

describe.runIf(kRunRedisTests)('a reply from a hostile worker', () => {
  it('is held to the rules of a local reply: no control character in tasks.csv or on the terminal, findings cut to an artifact, every cell within a spreadsheet\'s', { timeout: 600_000 }, async () => {
    const dir = buildSession([
      { id: 'A', description: 'huge findings', role: 'worker' },
      { id: 'C', description: 'counts without a signal', role: 'challenger' },
      { id: 'D', description: 'labels too long', role: 'challenger' },
      { id: 'E', description: 'a huge error', role: 'worker' },
    ], { sessionId: 'hostile-texts' });
    const results: Record<string, TaskResultInput> = {
      A: {
        findings: hostileText(3_000_044, kSecret),
        wisdom: { learnings: [`learnt ${kEscapes} ${kSecret}`] },
        discoveries: [{ type: `idea${kEscapes}`, data: { [`title${kEscapes}`]: `x${kEscapes}${kSecret}` } }],
        key_findings: [`key ${kEscapes}`],
      },
      C: { findings: 'two serious issues', severity_summary: `CRITICAL:1 HIGH:0 MEDIUM:0 LOW:0${kEscapes}` },
      D: { findings: 'fine', gc_signal: `CONVERGED${kEscapes}${'!'.repeat(40_000)}`, severity_summary: hostileText(40_000, kSecret) },
      E: { status: 'failed', findings: 'tried', error: hostileText(200_000, kSecret) },
    };
    const ran = await runAgainst(redis.url, 'hostile-texts', dir, (request) => unruled(request, results[request.task.id]!));
    expect(ran.answered.sort()).toEqual(['A', 'C', 'D', 'E']);
    // E failed (its result says so): exit 1, every task recorded.
    expect(ran.code, ran.stderr).toBe(1);

    const terminal = ran.stdout + ran.stderr;
    expect(terminal).not.toMatch(kControl);
    expect(terminal).not.toContain(kSecret);
    const tasks = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    expect(tasks.replace(/\r\n/g, '\n')).not.toMatch(kControl);
    for (const record of readCsvRecords(join(dir, 'tasks.csv'))) {
      for (const [column, cell] of Object.entries(record)) expect(cell.length, `${record.id}.${column}`).toBeLessThanOrEqual(kCellLimit);
    }
    for (const { path, text } of filesOf(dir)) {
      expect(text, path).not.toContain(kSecret);
      expect(text.replace(/\r\n/g, '\n'), path).not.toMatch(kControl);
    }

    const rows = readRows(dir);
    const a = rows.get('A')!;
    expect(a.status).toBe('completed');
    expect(a.findings.length).toBeLessThanOrEqual(500);
    expect(a.findings).toContain('[… full output: artifacts/A/output.md]');
    const output = readFileSync(join(dir, 'artifacts', 'A', 'output.md'), 'utf8');
    expect(output.length).toBeGreaterThan(600_000);
    expect(output.startsWith('findings  *** findings')).toBe(true);
    expect(rows.get('C')).toMatchObject({ status: 'completed', gc_signal: 'REVISION_NEEDED', severity_summary: 'CRITICAL:1 HIGH:0 MEDIUM:0 LOW:0' });
    const d = rows.get('D')!;
    expect(d.gc_signal).toMatch(/^CONVERGED!+…$/);
    expect(d.gc_signal).toHaveLength(500);
    expect(d.severity_summary.length).toBeLessThanOrEqual(500);
    expect(d.findings).toContain('[gc_signal cut: the first 499 of 40009 characters kept]');
    const e = rows.get('E')!;
    expect(e.status).toBe('failed');
    expect(e.error.length).toBeLessThanOrEqual(4000);
    expect(e.error).toMatch(/characters cut…/);
  });

  // The same limit as 50 MB under the default caps (scripts/bench/bullmq-big-reply.ts measures
  // that one), at small caps: a loaded machine took more than 600 s to move 50 MB through Redis.
  it('larger than the caps allow is refused unread as invalid output naming its size and the limit, and the run goes on', { timeout: 600_000 }, async () => {
    const dir = buildSession([
      { id: 'BIG', description: 'a 4 MB reply', role: 'worker' },
      { id: 'B', description: 'an honest reply', role: 'worker' },
    ], { sessionId: 'hostile-size', session: { pipeline: 'generic', max_stdout_bytes: 16_384, max_artifact_bytes: 16_384 } });
    // Findings of 4 MiB, once (the discovery record's copy left empty): a return value of 4 MiB and a little.
    const bigReply = unruledReply('BIG', 'worker', { findings: 'x'.repeat(4 * 1024 * 1024) });
    const bigText = JSON.stringify({ ...bigReply, discovery: { ...bigReply.discovery, findings: '' } });
    const ran = await runAgainst(redis.url, 'hostile-size', dir, (request) =>
      request.task.id === 'BIG' ? bigText : unruled(request, { findings: 'small and honest' }),
    );
    expect(ran.answered.sort()).toEqual(['B', 'BIG']);
    expect(ran.code, ran.stderr).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('B')).toMatchObject({ status: 'completed', findings: 'small and honest' });
    const refused = rows.get('BIG')!;
    expect(refused.status).toBe('failed');
    // Not retried: the same worker code would send the same reply.
    const attempts = lines(join(dir, 'attempts.ndjson')).map((line) => JSON.parse(line) as { task: string; error_class: string });
    expect(attempts.filter((attempt) => attempt.task === 'BIG').map((attempt) => attempt.error_class)).toEqual(['invalid-output']);
    // The size as BullMQ stores it: the JSON of the sealed reply's text (an envelope of the reply's JSON).
    const envelope = sealReply(Signing.withSecret(kTestSecret), queueNameOf('hostile-size'), 'a-job-id', '0'.repeat(64), bigText);
    const size = Buffer.byteLength(JSON.stringify(envelope)).toLocaleString('en-US');
    // 4 × (16 KiB of artifacts + 16 KiB of stdout) + 1 MiB (45 MiB under the default caps).
    expect(refused.error).toContain(`Invalid output: the reply from the worker is ${size} bytes, past the 1,179,648 that the run's caps allow a reply`);
    // Nothing of it in the session: its files are as small as an honest run's.
    const bytes = filesOf(dir).reduce((total, file) => total + Buffer.byteLength(file.text), 0);
    expect(bytes).toBeLessThan(1024 * 1024);
  });

  it('whose event holds no JSON stops no event reader: a later reply on the stream still settles its attempt', { timeout: 600_000 }, async () => {
    const sessionId = 'forged-event';
    const key = (name: string) => `bull:${queueNameOf(sessionId)}:${name}`;
    const signing = Signing.withSecret(kTestSecret);
    const backend = await BullmqBackend.open({ url: redis.url, sessionId, runId: '0123456789ab', signing, warn: () => undefined });
    const client = new Redis(redis.url);
    try {
      const request = {
        executor: { type: 'module', path: '/nowhere.mjs' },
        task: { id: 'A', wave: 1, attempt: 1, session: '/nowhere', row: { id: 'A', description: 'x', role: 'worker' }, prev_context: '' },
        timeoutMs: 1000,
      } as unknown as AttemptRequest;
      let answer: unknown;
      void backend.submit(request).then((reply) => (answer = reply), (error: unknown) => (answer = error));
      let jobId: string | undefined;
      await until(() => jobId !== undefined, 'the job in the queue', async () => {
        [jobId] = await client.lrange(key('wait'), 0, 0);
      });
      // BullMQ's reader parses each completed event's return value: this one throws in its loop.
      await client.xadd(key('events'), '*', 'event', 'completed', 'jobId', 'forged', 'returnvalue', '{');
      // The job stays waiting in Redis, so only the event stream can settle it: its reply is
      // added again until it is read, as the reader may be starting again when one is added.
      const reply = finishAttempt({ id: 'A', row: { role: 'worker' } as never }, { kind: 'result', result: { findings: 'from the stream' } });
      await until(() => answer !== undefined, 'the reply read from the stream', async () => {
        const sealed = sealReply(signing, queueNameOf(sessionId), jobId!, requestDigest(request), JSON.stringify(reply));
        await client.xadd(key('events'), '*', 'event', 'completed', 'jobId', jobId!, 'returnvalue', JSON.stringify(sealed));
      });
      expect(answer).toMatchObject({ kind: 'finished', findings: 'from the stream' });
    } finally {
      client.disconnect();
      await backend.cancelAll();
      await backend.close();
    }
  });
});
