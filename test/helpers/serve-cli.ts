import { readFileSync } from 'node:fs';
import { spawnCli, waitFor, type SpawnedCli } from './spawn-cli.js';

/** A `csv-wave serve` process and what it printed it serves at. */
export interface ServedSession {
  server: SpawnedCli;
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
}

/** Starts `csv-wave serve` (the built CLI, a process of its own) on a free port and resolves with the URL it printed on a line of its own. */
export async function serve(dir: string, ...flags: string[]): Promise<ServedSession> {
  const server = spawnCli('serve', dir, '--port', '0', ...flags);
  // The address is alone on its line (so that it is copied without anything else).
  const address = /^(http:\/\/\S+\/)$/m;
  await waitFor(() => address.test(server.stdoutSoFar()) || server.child.exitCode !== null, 'serve to listen');
  const url = address.exec(server.stdoutSoFar())?.[1];
  if (!url) throw new Error(`serve did not start: ${server.stderrSoFar()}`);
  return { server, url, port: Number(new URL(url).port) };
}

/** Stops a CLI process with SIGTERM and waits for its end; nothing when it has ended. */
export async function stop(cli: SpawnedCli | undefined): Promise<void> {
  if (!cli || cli.child.exitCode !== null || cli.child.signalCode !== null) return;
  cli.child.kill('SIGTERM');
  await cli.exited;
}

/** The resident memory of a process, in MiB, as the kernel counts it (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  const found = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!found) throw new Error(`No VmRSS for process ${pid}`);
  return Number(found[1]) / 1024;
}

/** A client of `/events` that reads everything: the `data:` field of each message, in order. */
export interface LiveReader {
  messages: string[];
  /** Every byte the stream brought, comments included. */
  bytes(): number;
  close(): void;
}

/** Opens `/events` of a served session (with `headers`, say a token) and collects its messages until closed. */
export async function liveReader(url: string, headers: Record<string, string> = {}): Promise<LiveReader> {
  const abort = new AbortController();
  const response = await fetch(`${url}events`, { headers, signal: abort.signal });
  if (response.status !== 200 || !response.body) throw new Error(`/events answered ${response.status}: ${await response.text()}`);
  const messages: string[] = [];
  let bytes = 0;
  let pending = '';
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        pending += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const data = pending
            .slice(0, end)
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart());
          if (data.length > 0) messages.push(data.join('\n'));
          pending = pending.slice(end + 2);
        }
      }
    } catch {
      // Closed by close() or by the server.
    }
  })();
  return { messages, bytes: () => bytes, close: () => abort.abort() };
}
