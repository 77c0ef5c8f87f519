/**
 * `csv-wave serve` under clients that never read: a finished session of --tasks tasks, --clients
 * loopback sockets that ask for /events and never read a byte, and one more attempt line
 * appended to attempts.ndjson every --every-ms (a run going on). Prints the server process's
 * VmRSS each second, then the start, the peak and the last. Stops early past --limit-mib, so
 * that a server without the bounds does not take the machine's memory.
 *
 *   npm run build
 *   npx tsx scripts/serve-slow-clients.ts [--tasks 20000] [--clients 100] [--seconds 60]
 *                                         [--every-ms 300] [--limit-mib 1500] [--bin dist/cli/bin.js]
 *
 * --bin names another build of the CLI (an older one, to compare). The figures are in
 * RELIABILITY.md, "serve and report.html under attack"; test/report/serve-load.test.ts
 * checks the same with 100 clients of several kinds across 8 changes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { appendAttempt, bigReportSession } from '../test/helpers/big-report-session.js';
import { slowClient } from '../test/helpers/raw-http.js';
import { rssMiB, serve } from '../test/helpers/serve-cli.js';
import { sleep } from '../test/helpers/spawn-cli.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '20000' },
    clients: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '60' },
    'every-ms': { type: 'string', default: '300' },
    'limit-mib': { type: 'string', default: '1500' },
    bin: { type: 'string' },
  },
});
const tasks = Number(values.tasks);
const seconds = Number(values.seconds);
const limit = Number(values['limit-mib']);

const dir = bigReportSession(tasks, 130);
const started = values.bin === undefined ? await serve(dir) : await serveWith(values.bin, dir);
const pid = started.server.child.pid!;
const clients: Socket[] = [];
for (let i = 0; i < Number(values.clients); i++) clients.push(slowClient(started.port, '/events'));
const start = rssMiB(pid);
let peak = start;
let last = start;
let changes = 0;
const changer = setInterval(() => appendAttempt(dir, ++changes % tasks), Number(values['every-ms']));
const began = performance.now();
while ((performance.now() - began) / 1000 < seconds) {
  await sleep(1000);
  last = rssMiB(pid);
  peak = Math.max(peak, last);
  console.log(`${Math.round((performance.now() - began) / 1000)} s: ${Math.round(last)} MiB`);
  if (last > limit) {
    console.log(`past ${limit} MiB: stopped`);
    break;
  }
}
clearInterval(changer);
const elapsed = Math.round((performance.now() - began) / 1000);
console.log(
  `${tasks} tasks, ${clients.length} clients that never read, ${changes} changes in ${elapsed} s: ` +
    `RSS ${Math.round(start)} MiB at start, ${Math.round(peak)} MiB at the peak, ${Math.round(last)} MiB at the end`,
);
for (const client of clients) client.destroy();
started.server.child.kill('SIGTERM');

/** `serve` from another build of the CLI, on a free port. */
async function serveWith(bin: string, session: string): Promise<{ server: { child: ChildProcess }; port: number }> {
  const child = spawn(process.execPath, [bin, 'serve', session, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let printed = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      printed += text;
      const found = /at http:\/\/[^/]+:(\d+)\//.exec(printed);
      if (found) resolve(Number(found[1]));
    });
    child.once('exit', (code) => reject(new Error(`${bin} serve exited with ${code}: ${printed}`)));
  });
  return { server: { child }, port };
}
