#!/usr/bin/env node
import { main } from './main.js';
import { guardProcessOutput, letGoOfLostTerminal } from './process-output.js';

// A closed pipe, a closed terminal or a full disk under stdout/stderr drops that output; the
// command goes on and exits with its own code (a run still records every task).
guardProcessOutput();

process.exitCode = await main(process.argv.slice(2));
// After a hang-up, so that the exit code survives Node's own exit (see there).
letGoOfLostTerminal();
