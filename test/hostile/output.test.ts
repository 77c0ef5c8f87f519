/**
 * Hostile task output, end to end through the CLI: each case fails (or completes) only its
 * own task with a clear message, every other task of the run completes, and tasks.csv
 * stays a valid CSV. The guarantees are listed in RELIABILITY.md.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, test } from 'vitest';
import { RunEmitter } from '../../src/events/events.js';
import { runSession } from '../../src/run/run-session.js';
import type { InteractiveHandler } from '../../src/interactive/types.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import {
  expectOthersIntact,
  hostileSession,
  kBystanders,
  kScriptOrOk,
  outcomes,
  runScripts,
} from './helpers.js';

const kModule = new URL('./fixtures/hostile-module.mjs', import.meta.url).pathname;

describe('output that is not a valid result', () => {
  test('stdout that starts like a JSON object but does not parse fails as invalid output naming the JSON error, without retry', async () => {
    const dir = hostileSession({
      BROKEN: `echo run >> BROKEN.count; printf '%s' '{"findings": "unterminated'`,
      PRETTY: `printf '{\\n  "findings": oops\\n}\\n'`,
      LASTLINE: `echo 'working...'; echo '{"findings": "x",}'`,
      // A JSON line first, then text: log lines, not a result (DESIGN.md section 6).
      LOGLINE: `echo '{"level":"info"}'; echo 'then plain text'`,
    });
    const result = await runScripts(dir, '--retries', '2', '--retry-delay', '0.01');
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    for (const id of ['BROKEN', 'PRETTY']) {
      expect(rows.get(id)!.status).toBe('failed');
      expect(rows.get(id)!.error).toMatch(/^Invalid output: stdout starts like a JSON result but is not valid JSON \([^\n]*JSON[^\n]*\); pass --output text to take stdout as text$/);
    }
    expect(rows.get('LASTLINE')!.error).toMatch(/^Invalid output: the last line of stdout looks like a JSON result but is not valid JSON \(.*JSON.*\); pass --output text to take stdout as text$/);
    expect(rows.get('LOGLINE')).toMatchObject({ status: 'completed', findings: '{"level":"info"}\nthen plain text' });
    // invalid-output is not retried.
    expect(readFileSync(join(dir, 'BROKEN.count'), 'utf8')).toBe('run\n');
    expect(result.stdout).toMatch(/\[FAIL\] BROKEN .*Invalid output/);
    expectOthersIntact(dir);
  });

  test('JSON with wrong types fails naming each bad field', async () => {
    const dir = hostileSession({
      TYPES: `printf '%s' '{"findings": 42, "status": "done"}'`,
      DISC: `printf '%s' '{"findings": "x", "discoveries": "nope"}'`,
      WISDOM: `printf '%s' '{"findings": "x", "wisdom": {"learnings": [1]}}'`,
    });
    expect((await runScripts(dir)).code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('TYPES')!.error).toMatch(/^Invalid result: /);
    expect(rows.get('TYPES')!.error).toMatch(/\bfindings: [^;]*string/);
    expect(rows.get('TYPES')!.error).toMatch(/\bstatus: /);
    expect(rows.get('DISC')!.error).toMatch(/^Invalid result: discoveries: /);
    expect(rows.get('WISDOM')!.error).toMatch(/^Invalid result: wisdom\.learnings\.0: /);
    for (const id of ['TYPES', 'DISC', 'WISDOM']) expect(rows.get(id)!.status).toBe('failed');
    expectOthersIntact(dir);
  });

  test('a module result that is not JSON data (a cycle, a BigInt) fails as invalid output', async () => {
    const dir = buildSession([
      { id: 'CYCLE', description: 'cyclic', role: 'r' },
      { id: 'BIGINT', description: 'bigint', role: 'r' },
      ...kBystanders,
    ]);
    expect((await runCli('run', dir, '--module', kModule)).code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('CYCLE')!.error).toMatch(/^Invalid result: not JSON data \(.*circular/i);
    expect(rows.get('BIGINT')!.error).toMatch(/^Invalid result: not JSON data \(.*BigInt/);
    expectOthersIntact(dir);
  });
});

describe('too much output', () => {
  test('50 MB of stdout: the first 1 MiB is kept in artifacts, the findings say how much was dropped, the task completes', async () => {
    const total = 50 * 1024 * 1024;
    const dir = hostileSession({
      BIG: `yes 'hostile line of output' | head -c ${total}`,
      // Logs past the cap, then the result on the last line: the result is still found.
      LOGS: `yes 'log line' | head -n 400000; echo '{"findings": "the real result"}'`,
      // A JSON result bigger than the cap cannot be complete: it fails, saying why.
      HUGEJSON: `printf '{"findings": "'; head -c 2000000 /dev/zero | tr '\\0' a; printf '"}'`,
    });
    const result = await runScripts(dir);
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    const note = `[stdout cut: the first 1048576 of ${total} bytes kept, ${total - 1048576} dropped (max_stdout_bytes)]`;
    const big = rows.get('BIG')!;
    expect(big.status).toBe('completed');
    expect(big.findings.length).toBeLessThanOrEqual(500);
    expect(big.findings).toMatch(/^hostile line of output\nhostile line of output\n/);
    expect(big.findings).toContain(note);
    expect(big.findings.endsWith(' [… full output: artifacts/BIG/output.md]')).toBe(true);
    const artifact = join(dir, 'artifacts', 'BIG', 'output.md');
    const size = statSync(artifact).size;
    expect(size).toBeGreaterThan(1_000_000);
    expect(size).toBeLessThanOrEqual(1048576 + 1024);
    const text = readFileSync(artifact, 'utf8');
    expect(text.startsWith('hostile line of output\n')).toBe(true);
    expect(text.endsWith(`\n${note}`)).toBe(true);

    expect(rows.get('LOGS')).toMatchObject({
      status: 'completed',
      findings: `the real result\n[stdout cut: the first 1048576 of 3600032 bytes kept, 2551456 dropped (max_stdout_bytes)]`,
    });
    expect(rows.get('HUGEJSON')!.status).toBe('failed');
    expect(rows.get('HUGEJSON')!.error).toMatch(
      /^Invalid output: stdout starts like a JSON result, but it was 2000016 bytes and only the first 1048576 are kept \(max_stdout_bytes\)/,
    );
    expectOthersIntact(dir);
  });

  test('a line that never ends is capped like any output', async () => {
    // 5 MB without a newline: read to its end, capped, completed. No --timeout: on a loaded
    // machine the pipe may take any time, and the test is about the cap.
    const dir = hostileSession({ LONGLINE: `yes | tr -d '\\n' | head -c 5000000` });
    const result = await runScripts(dir);
    expect(result.code).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('LONGLINE')!.status).toBe('completed');
    expect(rows.get('LONGLINE')!.findings).toMatch(/^y{50}/);
    expect(rows.get('LONGLINE')!.findings).toContain('[stdout cut: the first 1048576 of 5000000 bytes kept, 3951424 dropped (max_stdout_bytes)]');
    expectOthersIntact(dir);
  });

  test('an endless line stops at the timeout', async () => {
    // Never ends: only the timeout kills it; memory stays at the cap meanwhile. The
    // bystanders of this run only print a word, far inside the same timeout.
    const dir = hostileSession({ ENDLESS: `yes | tr -d '\\n'` });
    const result = await runScripts(dir, '--timeout', '2', '--retries', '0');
    expect(result.code).toBe(1);
    expect(readRows(dir).get('ENDLESS')).toMatchObject({
      status: 'failed',
      error: 'Timed out after 2s; the command and its children were killed',
    });
    expectOthersIntact(dir);
  });
});

describe('binary bytes and terminal escapes', () => {
  test('ANSI escapes and control characters are removed, invalid UTF-8 becomes U+FFFD, and tasks.csv stays valid', async () => {
    const dir = hostileSession({
      ANSI: `printf '\\033[31mred\\033[0m and \\033]0;window title\\007plain\\r\\n'`,
      // SOH, STX, ESC, DEL, two stray continuation bytes, FE FF, and U+009B (8-bit CSI) "2J".
      BINARY: `printf 'bin:\\001\\002\\033\\177\\200\\201\\376\\377:\\302\\2332Jend'`,
      RANDOM: `printf 'x'; head -c 65536 /dev/urandom`,
      STDERR: `printf '\\033[1;31mERROR\\033[0m: bad\\000 thing\\n' >&2; exit 2`,
      ESCAPED: `printf '%s' '{"findings": "\\u001b[2Jcleared \\u0000nul \\ud800 half", "gc_signal": "\\u0007X"}'`,
    });
    expect((await runScripts(dir)).code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('ANSI')).toMatchObject({ status: 'completed', findings: 'red and plain' });
    expect(rows.get('BINARY')).toMatchObject({ status: 'completed', findings: 'bin:\ufffd\ufffd\ufffd\ufffd:end' });
    expect(rows.get('STDERR')).toMatchObject({ status: 'failed', error: 'Command exited with code 2: ERROR: bad thing' });
    expect(rows.get('ESCAPED')).toMatchObject({ status: 'completed', findings: 'cleared nul \ufffd half', gc_signal: 'X' });
    const random = rows.get('RANDOM')!;
    expect(random.status).toBe('completed');
    expect(random.findings).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    const whole = readFileSync(join(dir, 'artifacts', 'RANDOM', 'output.md'), 'utf8');
    expect(whole).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(whole).toContain('\ufffd');
    expectOthersIntact(dir);
  });

  test('a module: text fields are cleaned, discoveries too; an artifact keeps its content as written', async () => {
    const dir = buildSession([{ id: 'DIRTY', description: 'dirty-text', role: 'r' }, ...kBystanders]);
    expect((await runCli('run', dir, '--module', kModule)).code).toBe(0);
    expect(readRows(dir).get('DIRTY')!.findings).toBe('red text with bell and a lone \ufffd half');
    const board = readFileSync(join(dir, 'discoveries.ndjson'), 'utf8');
    expect(JSON.parse(board.trim()).data).toEqual({ text: 'clean' });
    expect(readFileSync(join(dir, 'artifacts', 'DIRTY', 'raw.md'), 'utf8')).toBe('kept as written: \u001b[1mbold\u001b[0m');
    expectOthersIntact(dir);
  });
});

describe('formula triggers', () => {
  test('cells from task output are guarded in the file, and status --json returns the exact text', async () => {
    const expected = {
      JSONCELLS: {
        findings: '=HYPERLINK("http://evil.example","click")',
        gc_signal: '+SUM(1,2)',
        severity_summary: '@cmd',
        error: "-2+3+cmd|' /C calc'!A0",
        status: 'failed',
      },
      TABBED: { findings: '\t=1+1', gc_signal: '', severity_summary: '', error: '', status: 'completed' },
      PLAIN: { findings: "=1+1 from plain text, 'quoted'", gc_signal: '', severity_summary: '', error: '', status: 'completed' },
    };
    const dir = hostileSession({
      JSONCELLS: `cat <<'EOF'\n${JSON.stringify(expected.JSONCELLS)}\nEOF`,
      TABBED: `cat <<'EOF'\n${JSON.stringify({ findings: expected.TABBED.findings })}\nEOF`,
      PLAIN: `printf '%s\\n' "=1+1 from plain text, 'quoted'"`,
    });
    expect((await runScripts(dir)).code).toBe(1);
    // The raw fields, as a spreadsheet sees them: no output cell starts a formula.
    const raw = parse(readFileSync(join(dir, 'tasks.csv'), 'utf8'), { columns: true, bom: true }) as Record<string, string>[];
    for (const record of raw) {
      for (const column of ['findings', 'gc_signal', 'severity_summary', 'error']) {
        expect(record[column]!, `${record['id']}.${column}`).not.toMatch(/^[=+\-@\t\r]/);
      }
    }
    const byId = new Map(raw.map((record) => [record['id'], record]));
    expect(byId.get('JSONCELLS')!['findings']).toBe(`'${expected.JSONCELLS.findings}`);
    expect(byId.get('TABBED')!['findings']).toBe(`'${expected.TABBED.findings}`);
    const status = await runCli('status', dir, '--json');
    // The session has a failed task (exit 1 above): status says so too.
    expect(status.code).toBe(1);
    const tasks = (JSON.parse(status.stdout) as { tasks: Record<string, string>[] }).tasks;
    for (const [id, cells] of Object.entries(expected)) {
      const task = tasks.find((row) => row['id'] === id)!;
      expect(task).toMatchObject(cells);
    }
    expectOthersIntact(dir);
  });
});

describe('interactive handlers', () => {
  test('a handler that throws fails its task with the thrown message; its dependents are skipped; the run goes on', async () => {
    const dir = buildSession([
      { id: 'ASK', description: 'ask', role: 'asker', exec_mode: 'interactive' },
      { id: 'STR', description: 'ask', role: 'stringer', exec_mode: 'interactive' },
      { id: 'CHILD', description: 'after ask', role: 'r', deps: 'ASK' },
      ...kBystanders,
    ]);
    const handlers = new Map<string, InteractiveHandler>([
      ['asker', { run: () => Promise.reject(new Error('the handler exploded')) }],
      [
        'stringer',
        {
          run: () => {
            throw 'a plain string';
          },
        },
      ],
    ]);
    const events = new RunEmitter();
    const done: string[] = [];
    events.on('task:done', (event) => done.push(event.id));
    const summary = await runSession(dir, {
      executor: { type: 'command', template: kScriptOrOk },
      interactiveHandlers: handlers,
      events,
    });
    expect(summary.exitCode).toBe(1);
    const all = outcomes(dir);
    expect(all['ASK']).toBe('failed: the handler exploded');
    expect(all['STR']).toBe('failed: a plain string');
    expect(all['CHILD']).toBe('skipped: Dependency failed or skipped: ASK (failed)');
    expect(done.sort()).toEqual(['AFTER', 'ASK', 'CHILD', 'OK-1', 'OK-2', 'STR']);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
    expectOthersIntact(dir);
  });
});
