/**
 * The launcher process: a small Node process, started by the local backend, that runs
 * command attempts. A command is forked from here rather than from the engine: fork()
 * copies the forking process's memory map, and this process is a fraction of the engine's
 * (no worker threads, no session in memory), so each spawn costs a fraction as much.
 *
 * Protocol (launcher.ts is the other end): each line on stdin is `<n> <AttemptRequest
 * JSON>`; each line on stdout is `<n> <AttemptReply JSON>`, in the order the attempts
 * finish. An attempt runs through the same code as on a worker thread (worker.ts
 * `replyText`: the command executor, then finishAttempt), which never throws and always
 * answers JSON text.
 *
 * When stdin ends (the backend closed, or the engine died), the attempts still running
 * finish and answer, then the process exits: the commands are never left without their
 * parent while they run (the backend finds them as its launcher's children), and what
 * the engine's death left running is ended by the next run, as it always was.
 *
 * With `--end-commands-if-orphaned` (a `csv-wave worker`'s launcher: no next run comes to
 * end what a dead worker left, and BullMQ gives its jobs to another worker meanwhile), a
 * launcher whose parent died (its stdin ended and it was reparented) kills the process
 * groups of its running commands at once and exits.
 */
import { replyText } from '../../executors/worker.js';
import type { AttemptRequest } from '../../executors/messages.js';
import { kEndIfOrphaned, watchForOrphaning } from './launcher-orphan.js';
import { LineSplitter } from './line-splitter.js';

// process.env reads every variable through C++ each time it is spread, which the command
// executor does per task; a plain copy, made once, is read at JavaScript speed.
process.env = { ...process.env };
// Ctrl-C, or a closing terminal, signals the whole foreground group, this process
// included: the engine decides what a stop does to the running commands (it lets them
// finish within a grace), so this process lives on until its stdin ends.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
/** The attempts sent and not answered yet, by tag. */
const running = new Map<string, AttemptRequest>();
const orphaning = process.argv.includes(kEndIfOrphaned) ? watchForOrphaning(running) : undefined;
// The engine is gone and so is the reader of the replies: nothing more can be answered.
process.stdout.on('error', () => (orphaning ? void orphaning.endCommands() : process.exit(1)));

const splitter = new LineSplitter((line) => {
  const space = line.indexOf(' ');
  const tag = line.slice(0, space);
  let request: AttemptRequest;
  try {
    request = JSON.parse(line.slice(space + 1)) as AttemptRequest;
  } catch {
    // The engine wrote it with JSON.stringify: a line that does not parse is a broken pipe.
    process.exit(1);
  }
  running.set(tag, request);
  void replyText(request).then((text) => {
    running.delete(tag);
    process.stdout.write(`${tag} ${text}\n`);
  });
});
process.stdin.on('data', (chunk: Buffer) => splitter.push(chunk));
process.stdin.on('end', () => orphaning?.watch());
