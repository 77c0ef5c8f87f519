import type { Command } from 'commander';
import { openSession } from '../../session/session.js';
import { WaveError } from '../../errors.js';
import { startLiveServer } from '../../report/live/live-server.js';
import { ExitCode, type CliIo } from '../io.js';

/** The longest `--client-timeout`: a day. */
const kMaxClientTimeoutSeconds = 86_400;

export function registerServe(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('serve')
    .description('serve the report page and update it live while a run of the session goes on (a notice per change by Server-Sent Events, the data from /data)')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--port <n>', 'port to listen on (0 picks a free one)', '8765')
    .option('--host <host>', 'address to listen on; any other than a loopback address needs --token', '127.0.0.1')
    .option('--token <token>', 'bearer token every request must carry (or CSV_WAVE_TOKEN)')
    .option('--client-timeout <seconds>', 'drop a client that takes nothing of what it asked for during this long', '30')
    .action(async (sessionPath: string, options: { port: string; host: string; token?: string; clientTimeout: string }) => {
      const port = Number(options.port);
      if (!/^\d+$/.test(options.port) || port > 65535) {
        throw new WaveError('USAGE', `Expected \`--port\` to be an integer from 0 to 65535, got \`${options.port}\``);
      }
      const clientTimeout = Number(options.clientTimeout);
      if (!/^\d+(\.\d+)?$/.test(options.clientTimeout) || clientTimeout <= 0 || clientTimeout > kMaxClientTimeoutSeconds) {
        throw new WaveError(
          'USAGE',
          `Expected \`--client-timeout\` to be a number of seconds above 0, at most ${kMaxClientTimeoutSeconds}, got \`${options.clientTimeout}\``,
        );
      }
      const session = openSession(sessionPath);
      const token = options.token ?? process.env['CSV_WAVE_TOKEN'];
      const server = await startLiveServer(session, { host: options.host, port, token, clientTimeoutMs: Math.ceil(clientTimeout * 1000) });
      // The address alone on its line: a double click or a terminal's link copies it, and nothing else.
      const open = token ? 'open this address with ?token=<the token> after it' : 'open this address in a browser';
      io.stdout(`Serving ${session.displayPath} (Ctrl-C stops); ${open}:\n${server.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await server.close();
      done(ExitCode.Ok);
    });
}
