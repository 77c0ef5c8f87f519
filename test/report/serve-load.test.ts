import { mkdirSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { appendAttempt, bigReportSession } from '../helpers/big-report-session.js';
import { buildSession } from '../helpers/session-builder.js';
import { slowClient, tcpState } from '../helpers/raw-http.js';
import { liveReader, rssMiB, serve, stop } from '../helpers/serve-cli.js';
import { waitFor } from '../helpers/spawn-cli.js';

/** Changes of the session the memory test makes. */
const kChanges = 8;

/** Clients that never read, per path: 100 in all, the live streams past the 32 that are taken refused with 503. */
const kSlowClients: [path: string, count: number][] = [
  ['/events', 60],
  ['/data', 20],
  ['/', 10],
  ['/artifacts/T0/big.md', 10],
];

describe('csv-wave serve under clients that do not read', () => {
  test(
    '100 clients that never read, across changes of a 5,000-task session: the server process\'s memory stays flat',
    { timeout: 600_000 },
    async () => {
      const dir = bigReportSession(5000, 800);
      mkdirSync(join(dir, 'artifacts', 'T0'), { recursive: true });
      writeFileSync(join(dir, 'artifacts', 'T0', 'big.md'), 'x'.repeat(16 * 1024 * 1024));
      const { server, url, port } = await serve(dir);
      const pid = server.child.pid!;
      const slow: Socket[] = [];
      const reader = await (async () => {
        // The first snapshot is built for the page, then a reader that takes every notice, as an open page does.
        expect((await fetch(url)).status).toBe(200);
        return liveReader(url);
      })();
      try {
        await waitFor(() => reader.messages.length > 0 || server.child.exitCode !== null, 'the first message of /events');
        const start = rssMiB(pid);
        for (const [path, count] of kSlowClients) for (let i = 0; i < count; i++) slow.push(slowClient(port, path));
        // A loaded machine lets V8's heap grow before it collects: the bound is generous. Before
        // the fix each change wrote the whole data (about 5 MB) to each of the 60 streams, 300 MB a change.
        const bound = 2 * start + 200;
        const seen: number[] = [];
        for (let change = 1; change <= kChanges; change++) {
          const before = reader.messages.length;
          appendAttempt(dir, change);
          await waitFor(() => reader.messages.length > before || server.child.exitCode !== null, `the notice of change ${change}`);
          // What a page does at a notice.
          await (await fetch(`${url}data`)).arrayBuffer();
          seen.push(Math.round(rssMiB(pid)));
          expect(seen.at(-1)!, `RSS after change ${change} (MiB; ${seen.join(', ')}; start ${Math.round(start)})`).toBeLessThan(bound);
        }
        console.log(`serve RSS with ${slow.length} clients that never read: start ${Math.round(start)} MiB, after each change ${seen.join(', ')} MiB`);
        const data = (await (await fetch(`${url}data`)).json()) as { generation: number; attempts: unknown[] };
        expect(data.attempts).toHaveLength(5000 + kChanges);
      } finally {
        reader.close();
        for (const socket of slow) socket.destroy();
        await stop(server);
      }
    },
  );

  test('a client that reads nothing of a 32 MB artifact is dropped after --client-timeout, and what it reads at last ends short', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    mkdirSync(join(dir, 'artifacts', 'A'), { recursive: true });
    const size = 32 * 1024 * 1024;
    writeFileSync(join(dir, 'artifacts', 'A', 'big.md'), 'y'.repeat(size));
    const { server, port } = await serve(dir, '--client-timeout', '1');
    const client = slowClient(port, '/artifacts/A/big.md');
    try {
      await new Promise((resolve) => client.once('connect', resolve));
      // Seen from the server's side: established while it sends, FIN-WAIT once it closed the connection.
      await waitFor(() => tcpState(port, client.localPort!) === '01', 'the server to take the connection');
      await waitFor(() => tcpState(port, client.localPort!) !== '01', 'the server to drop the client that reads nothing');
      let received = 0;
      client.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      const closed = new Promise((resolve) => client.once('close', resolve));
      client.resume();
      await closed;
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(size);
    } finally {
      client.destroy();
      await stop(server);
    }
  });
});
