import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether the Redis tests run: always under CI (`CI=true`), where a missing or broken
 * redis-server must fail them, never skip them; elsewhere only when redis-server is installed.
 */
export const kRunRedisTests = process.env['CI'] === 'true' || spawnSync('redis-server', ['--version']).status === 0;

/** A real redis-server on 127.0.0.1, its data in a temporary folder of its own. */
export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  /** Stops the server (SIGTERM, then waits for it to exit); the folder is kept for a restart. */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL (a crash: it saves nothing on its way out) and waits for it to exit. */
  crash(): Promise<void>;
  /** Starts it again on the same port and folder (a Redis lost mid-run, then back); stopped first if it runs. */
  restart(): Promise<void>;
  /** Stops it and removes its folder. */
  dispose(): Promise<void>;
}

/** A port nobody listens on right now (the kernel picks it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** How the server keeps its data. */
export interface RedisOptions {
  /**
   * Write every change to an append-only file, fsynced before each answer
   * (`--appendonly yes --appendfsync always`): a restart after a crash finds everything it
   * answered. @default false: nothing on disk, a restart comes back empty
   */
  appendOnly?: boolean;
}

/** Starts redis-server in the foreground and resolves once it says it accepts connections. */
function launch(port: number, dir: string, options: RedisOptions): Promise<ChildProcess> {
  const persistence = options.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const child = spawn(
    'redis-server',
    // rdbcompression off: DUMP then shows every stored text as it is, so a scan for a secret cannot miss a compressed one.
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence, '--daemonize', 'no', '--rdbcompression', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let said = '';
    const fail = (why: string) => reject(new Error(`redis-server did not start on port ${port}: ${why}\n${said}`));
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`it exited (${code ?? signal})`));
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      said += text;
      if (said.includes('Ready to accept connections')) resolve(child);
    });
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      said += text;
    });
  });
}

async function ended(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * Starts a redis-server on a free loopback port. Another process may take the port between
 * the look and the start, so a failed start is tried again on another port a few times.
 */
export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-redis-'));
  let child: ChildProcess | undefined;
  let port = 0;
  let lastError: unknown;
  for (let tries = 0; tries < 5 && !child; tries++) {
    port = await freePort();
    try {
      child = await launch(port, dir, options);
    } catch (error) {
      lastError = error;
    }
  }
  if (!child) throw lastError;
  let current: ChildProcess = child;
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop: () => ended(current),
    crash: () => ended(current, 'SIGKILL'),
    restart: async () => {
      await ended(current);
      current = await launch(port, dir, options);
    },
    dispose: async () => {
      await ended(current);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
