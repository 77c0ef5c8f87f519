import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what a full collection left alive, in percent. Its
 * default grows it up to fourfold while the program runs fast, and a big run makes much
 * short-lived garbage (tasks.csv rewrites, the report's pages, BullMQ's job objects): a
 * coordinator adding 100,000 jobs kept a third of its RSS alive, and a 1,000,000-task run
 * peaked at 4.1 GB with about 1.6 GB alive. At 20% the heap stays near what is alive, for more
 * frequent full collections (BENCHMARKS.md: 20,000 jobs queued, peak RSS 415 → 268 MB for
 * about 10% more CPU; the CLI's 1,000,000-task run, 4,113 → 3,009 MB, and 340 → 300 s).
 */
const kHeapGrowingPercent = 20;

/**
 * From this many tasks the CLI's run caps its heap's growth. Below, the default's speed is
 * worth more than its slack: 100,000 no-op module tasks peaked at 799 MB by default and
 * 531 MB capped, for 14% more CPU (interleaved, BENCHMARKS.md, issue 27 goal 5).
 */
export const kBigRunTasks = 200_000;

/**
 * Keeps this process's heap near what is alive. Read by V8 at each full collection, so it
 * holds from the call on; it changes the whole process, so only what owns its process calls
 * it: the CLI's run of a big session, and a bullmq coordinator.
 */
export function capHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${kHeapGrowingPercent}`);
}
