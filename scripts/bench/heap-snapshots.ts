/**
 * What a run keeps alive, by kind (issue 27, goal 5): runs `csv-wave run` of N no-op module
 * tasks in 10 waves (memory.ts's sessions) under `--heapsnapshot-signal`, takes a heap
 * snapshot of the CLI's main thread as wave A starts and another as wave B starts, and
 * prints the live heap of each by V8's node kind and constructor, and what grew between them.
 * A snapshot collects first, so it holds only what is alive. V8 cannot parse a snapshot of
 * more than about 500 MB as one string: keep N at a few 100,000.
 *
 *   npx tsx scripts/bench/heap-snapshots.ts [--tasks 100000] [--from 3] [--to 9] [--no-build]
 *
 * A tool for finding out: it writes nothing to BENCHMARKS.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, fail, isMain, kBin, positiveInteger, runMain } from './lib.js';
import { kWaves, writeNoopSession } from './memory.js';

const kUsage = 'npx tsx scripts/bench/heap-snapshots.ts [--tasks 100000] [--from 3] [--to 9] [--no-build]';

/** Bytes and count of each `kind:constructor` of a snapshot (strings by kind only). */
function liveByKind(file: string): Map<string, { bytes: number; count: number }> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const kinds = snapshot.snapshot.meta.node_types[0];
  const [width, kindAt, nameAt, sizeAt] = [fields.length, fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const named = new Set(['object', 'closure', 'native', 'hidden', 'array', 'code']);
  const totals = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const kind = kinds[snapshot.nodes[i + kindAt]!]!;
    const name = named.has(kind) ? snapshot.strings[snapshot.nodes[i + nameAt]!]!.slice(0, 60) : '';
    const key = name === '' ? kind : `${kind}: ${name}`;
    const total = totals.get(key) ?? { bytes: 0, count: 0 };
    total.bytes += snapshot.nodes[i + sizeAt]!;
    total.count += 1;
    totals.set(key, total);
  }
  return totals;
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { tasks: { type: 'string', default: '100000' }, from: { type: 'string', default: '3' }, to: { type: 'string', default: '9' }, 'no-build': { type: 'boolean', default: false } },
  });
  const tasks = positiveInteger('--tasks', values.tasks);
  const waves = [positiveInteger('--from', values.from), positiveInteger('--to', values.to)];
  if (waves[0]! >= waves[1]! || waves[1]! > kWaves) fail(`--from must come before --to, both waves of 1 to ${kWaves}`);
  ensureBuilt(!values['no-build']);
  const scratch = mkdtempSync(join(tmpdir(), 'csv-wave-bench-heap-'));
  try {
    const { dir, modulePath } = writeNoopSession(scratch, tasks);
    const args = ['--heapsnapshot-signal=SIGUSR2', kBin, 'run', dir, '--module', modulePath, '--concurrency', '64', '--json'];
    const child = spawn(process.execPath, args, { cwd: scratch, stdio: ['ignore', 'ignore', 'inherit'] });
    const wanted = [...waves];
    // A wave's file is written as the wave starts.
    const watch = setInterval(() => {
      if (wanted.length > 0 && existsSync(join(dir, `wave-${wanted[0]}.csv`))) {
        console.log(`snapshot as wave ${wanted.shift()} starts`);
        child.kill('SIGUSR2');
      }
    }, 10);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(watch);
    if (code !== 0) fail(`the run exited ${String(code)}`);
    const files = readdirSync(scratch).filter((name) => name.endsWith('.heapsnapshot')).sort();
    if (files.length !== 2) fail(`expected 2 snapshots, found ${files.length}: the run ended before wave ${wanted[0]} started`);
    const [first, second] = files.map((name) => liveByKind(join(scratch, name)));
    const sum = (totals: Map<string, { bytes: number }>) => [...totals.values()].reduce((all, total) => all + total.bytes, 0);
    console.log(`\n${tasks.toLocaleString('en-US')} tasks: ${mb(sum(first!))} MB alive as wave ${waves[0]} started, ${mb(sum(second!))} MB as wave ${waves[1]} started\n`);
    console.log(`| alive as wave ${waves[1]} started | MB | count | grown since wave ${waves[0]}, MB |`);
    console.log('|---|---:|---:|---:|');
    const rows = [...second!].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 15);
    for (const [key, total] of rows) console.log(`| ${key} | ${mb(total.bytes)} | ${total.count} | ${mb(total.bytes - (first!.get(key)?.bytes ?? 0))} |`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) runMain('heap-snapshots', kUsage, main);
