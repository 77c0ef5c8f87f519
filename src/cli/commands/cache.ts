import type { Command } from 'commander';
import { cacheStats, clearCache, pruneCache, type CacheStats, type PruneLimits } from '../../cache/cache-housekeeping.js';
import { WaveError } from '../../errors.js';
import { CacheFolder } from '../../session/files/cache-folder.js';
import { openSession } from '../../session/session.js';
import { ExitCode, printJson, type CliIo } from '../io.js';

interface CacheFlags {
  stats?: boolean;
  prune?: boolean;
  olderThan?: string;
  maxSize?: string;
  clear?: boolean;
  json?: boolean;
}

export function registerCache(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('cache')
    .description("the result cache's housekeeping: what it holds, pruning by age or size, clearing (docs/cache.md)")
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--stats', 'entries, bytes, the oldest and newest entry, the hits recorded (the default)')
    .option('--prune', 'remove entries by --older-than and/or --max-size, and lines that are no entry')
    .option('--older-than <age>', 'prune the entries not used (taken by a run, else written) for this long: 30d, 12h, 90m, 2w')
    .option('--max-size <size>', 'prune the least recently used entries until the cache holds at most this: 500M, 1G, 2GB')
    .option('--clear', 'remove every entry')
    .option('--json', 'print {"dir", "entries", "bytes", "packs", "broken", "oldest"?, "newest"?, "hits", "last_hit"?}; with --prune {"removed", "kept", "bytes_before", "bytes_after"}; with --clear {"removed"}')
    .action((sessionPath: string, flags: CacheFlags) => {
      const action = actionOf(flags);
      const session = openSession(sessionPath);
      const folder = CacheFolder.of(session.dir, session.config.cache_dir);
      if (action.kind === 'clear') {
        const removed = clearCache(folder);
        if (flags.json) printJson(io, { removed });
        else io.stdout(`Removed ${removed} entries from ${folder.dir}\n`);
      } else if (action.kind === 'prune') {
        const result = pruneCache(folder, action.limits, Date.now());
        if (flags.json) printJson(io, result);
        else io.stdout(`Removed ${result.removed} entries, kept ${result.kept}: ${sizeText(result.bytes_before)} -> ${sizeText(result.bytes_after)} in ${folder.dir}\n`);
      } else {
        const stats = cacheStats(folder);
        if (flags.json) printJson(io, stats);
        else io.stdout(statsText(stats, session.config.cache_dir !== undefined));
      }
      done(ExitCode.Ok);
    });
}

type Action = { kind: 'stats' } | { kind: 'clear' } | { kind: 'prune'; limits: PruneLimits };

/** The one thing the flags ask for; two at once, or --prune with no limit, is a usage error. */
function actionOf(flags: CacheFlags): Action {
  const pruning = flags.prune === true || flags.olderThan !== undefined || flags.maxSize !== undefined;
  const asked = [flags.stats === true && '--stats', pruning && '--prune', flags.clear === true && '--clear'].filter((name) => name !== false);
  if (asked.length > 1) throw new WaveError('USAGE', `Expected one of --stats, --prune and --clear, got ${asked.join(' and ')}`);
  if (flags.clear === true) return { kind: 'clear' };
  if (!pruning) return { kind: 'stats' };
  if (flags.olderThan === undefined && flags.maxSize === undefined) {
    throw new WaveError('USAGE', 'Expected `--prune` with `--older-than <age>` or `--max-size <size>`, e.g. `--prune --older-than 30d`');
  }
  return {
    kind: 'prune',
    limits: {
      ...(flags.olderThan === undefined ? {} : { olderThanMs: parseAge(flags.olderThan) }),
      ...(flags.maxSize === undefined ? {} : { maxBytes: parseSize(flags.maxSize) }),
    },
  };
}

const kAgeUnits: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const kSizeUnits: Readonly<Record<string, number>> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `30d` in milliseconds: a number and one of s, m, h, d, w. */
export function parseAge(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$/i.exec(text);
  if (match === null) throw new WaveError('USAGE', `Expected \`--older-than\` to be an age: a number and s, m, h, d or w, e.g. \`--older-than 30d\`; got \`${text}\``);
  return Number(match[1]) * kAgeUnits[match[2]!.toLowerCase()]!;
}

/** `1G` in bytes: a number and an optional unit, K, M, G or T (of 1024), with B, iB or nothing after it. */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|(b))?\s*$/i.exec(text);
  if (match === null) throw new WaveError('USAGE', `Expected \`--max-size\` to be a size: a number and K, M, G or T, e.g. \`--max-size 1G\`; got \`${text}\``);
  return Math.floor(Number(match[1]) * kSizeUnits[(match[2] ?? '').toLowerCase()]!);
}

function statsText(stats: CacheStats, shared: boolean): string {
  const lines = [
    `Cache: ${stats.dir}${shared ? " (session.json's cache_dir: other sessions may share it)" : ''}`,
    `${stats.entries} entries, ${sizeText(stats.bytes)} in ${stats.packs} pack(s)`,
  ];
  if (stats.oldest !== undefined) lines.push(`Oldest entry ${stats.oldest}, newest ${stats.newest}`);
  lines.push(stats.hits === 0 ? 'No hit recorded' : `${stats.hits} hit(s) recorded, the last ${stats.last_hit}`);
  if (stats.broken > 0) lines.push(`${stats.broken} line(s) are no valid entry (cut short or changed): never used; \`--prune\` removes them`);
  return `${lines.join('\n')}\n`;
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
