import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, test } from 'vitest';
import { normalizeRunOptions } from '../../src/options/options.js';
import { runCli } from '../helpers/cli.js';
import { roleResult } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

// With --executor openai, --concurrency defaults to the endpoint concurrency: before, it
// was the number of cores, so `--endpoint-concurrency 4` alone never had more than 2
// requests in flight on a 2-core machine.

/**
 * A chat endpoint that holds every request until `barrier` of them are open at once, then
 * answers them all (and every later one at once). A run that cannot have that many in
 * flight holds its requests until its --timeout ends them.
 */
async function startBarrierServer(barrier: number) {
  const held: { res: ServerResponse; id: string }[] = [];
  let open = 0;
  let maxOpen = 0;
  let released = false;
  const answer = (res: ServerResponse, id: string) => {
    const body = JSON.stringify({
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(roleResult('writer', id)), refusal: null }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const id = /Task: *(\S+)/.exec(text)?.[1] ?? 'T';
      open++;
      maxOpen = Math.max(maxOpen, open);
      res.on('close', () => open--);
      if (released) return answer(res, id);
      held.push({ res, id });
      if (open >= barrier) {
        released = true;
        for (const request of held.splice(0)) answer(request.res, request.id);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    maxOpen: () => maxOpen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('--concurrency with the openai executor', () => {
  test('defaults to the endpoint concurrency; other executors keep the cores; a given one wins', () => {
    const openai = { type: 'openai' as const, model: 'm' };
    expect(normalizeRunOptions({ executor: openai, endpointConcurrency: 37 }).concurrency).toBe(37);
    expect(normalizeRunOptions({ executor: openai }).concurrency).toBe(8);
    expect(normalizeRunOptions({ executor: openai, endpointConcurrency: 37, concurrency: 3 }).concurrency).toBe(3);
    expect(normalizeRunOptions({ executor: { type: 'command', cmd: 'true' }, endpointConcurrency: 37 }).concurrency).toBe(availableParallelism());
    // Model calls still share one thread: they wait on the server.
    expect(normalizeRunOptions({ executor: openai, endpointConcurrency: 37 }).threads).toBe(1);
  });

  test('--endpoint-concurrency N alone has N requests in flight at once', async () => {
    // More than the cores, so that the old default (the cores) cannot reach it on any machine.
    const n = Math.max(4, availableParallelism() + 1);
    const server = await startBarrierServer(n);
    close = server.close;
    const dir = buildSession(Array.from({ length: n * 2 }, (_, i) => ({ id: `T-${i + 1}`, description: 'write', role: 'writer' })));
    // The timeout and the halt only end a run that cannot reach the barrier (its requests are held).
    const args = ['run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--endpoint-concurrency', String(n), '--timeout', '60', '--retries', '0', '--halt', 'fail=1'];
    const result = await runCli(...args);
    expect(server.maxOpen(), result.stdout).toBe(n);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect([...readRows(dir).values()].every((row) => row.status === 'completed')).toBe(true);
  });
});
