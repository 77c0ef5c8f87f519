// Profiles a node process that a profiled csv-wave run starts without --cpu-prof (a
// launcher of commands started with flags of its own, a command that is a node script):
// node refuses --cpu-prof in NODE_OPTIONS, but a child inherits the environment, so
// profileCli (lib.ts) puts `--require` of this file there. It writes the profile where
// --cpu-prof writes the CLI's, named as --cpu-prof names them (pid, thread 0). A process
// started with --cpu-prof (the CLI itself, a child forked with its flags) and worker
// threads (which inherit --cpu-prof) are left to node's own profiler.
'use strict';
const { isMainThread } = require('node:worker_threads');

const dir = process.env.CSV_WAVE_BENCH_PROFILE_DIR;
if (dir && isMainThread && !process.execArgv.some((arg) => arg.startsWith('--cpu-prof'))) {
  const { Session } = require('node:inspector');
  const { writeFileSync } = require('node:fs');
  const { join } = require('node:path');
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.CSV_WAVE_BENCH_PROFILE_INTERVAL_US) || 1000 });
  session.post('Profiler.start');
  // A session in the process's own thread answers synchronously, so this writes before exit.
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(dir, `CPU.0.0.${process.pid}.0.001.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
