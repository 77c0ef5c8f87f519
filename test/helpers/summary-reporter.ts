import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';

/** How many of the slowest tests, and of the costliest files, the closing lines name. */
const kSlowest = 12;

/** When set, the path of a JSON file that gets every test file's times (for comparing two runs). */
const kTimesFile = process.env.CSV_WAVE_TEST_TIMES;

/**
 * Prints the closing lines CI reads whatever the test runner: the slowest tests, each with
 * its share of its timeout (a test near 100% fails on a busier machine: fix its cause, do
 * not raise the limit) and its CPU time (test/helpers/cpu-meter.ts: what it costs whatever
 * the load; a long wall time with little CPU is waiting), the test files that cost the most CPU,
 * the wall time of each test folder, and last one plain line,
 * `vitest: N passed, N failed, N skipped`. vitest's own summary stays above them.
 */
export default class SummaryReporter implements Reporter {
  #root = process.cwd();
  #defaultTimeout = 5_000;
  /** When each test file started and ended, by this process's clock (files run side by side). */
  readonly #spans = new Map<string, { start: number; end?: number }>();

  onInit(vitest: Vitest): void {
    this.#root = vitest.config.root;
    this.#defaultTimeout = vitest.config.testTimeout;
  }

  onTestModuleStart(module: TestModule): void {
    this.#spans.set(module.moduleId, { start: performance.now() });
  }

  onTestModuleEnd(module: TestModule): void {
    const span = this.#spans.get(module.moduleId);
    if (span !== undefined) span.end = performance.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const timed: { test: TestCase; file: string; ms: number; cpuMs: number | undefined; timeout: number }[] = [];
    for (const module of testModules) {
      const file = relative(this.#root, module.moduleId);
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
        if (state === 'passed' || state === 'failed') timed.push({ test, file, ms: test.diagnostic()?.duration ?? 0, cpuMs: test.meta().cpuMs, timeout: test.options.timeout ?? this.#defaultTimeout });
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    const lines = ['', 'Slowest tests (wall time, its share of its timeout, CPU time of the test file\'s process and the processes it reaped):'];
    for (const { test, file, ms, cpuMs, timeout } of timed.sort((a, b) => b.ms - a.ms).slice(0, kSlowest)) {
      const cpu = cpuMs === undefined ? '       ?' : seconds(cpuMs);
      lines.push(`  ${seconds(ms)} ${String(Math.round((100 * ms) / timeout)).padStart(3)}% ${cpu} CPU  ${file} > ${test.fullName}`);
    }
    const files = this.#files(testModules);
    lines.push('Costliest test files (CPU time of the file\'s process and the processes it reaped, from its import to its teardown; wall time):');
    for (const row of [...files].sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0)).slice(0, kSlowest)) {
      const cpu = row.cpuMs === undefined ? '       ?' : seconds(row.cpuMs);
      lines.push(`  ${cpu} CPU ${seconds(row.wallMs)} wall  ${row.file} (${row.project}, ${row.tests} tests)`);
    }
    if (kTimesFile !== undefined && kTimesFile !== '') writeFileSync(kTimesFile, `${JSON.stringify(files, null, 1)}\n`);
    lines.push('Test folders (wall: from its first file start to its last file end, files of other folders running beside; sum: of its files\' times):');
    for (const [folder, row] of this.#folders(testModules)) lines.push(`  ${seconds(row.wall)} wall ${seconds(row.sum)} sum  ${folder}: ${row.files} files, ${row.tests} tests`);
    lines.push(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }

  /** Each test file's wall time (start to end, as this process saw it) and CPU time (test/helpers/cpu-meter.ts). */
  #files(testModules: ReadonlyArray<TestModule>): FileTimes[] {
    return testModules.map((module) => {
      const span = this.#spans.get(module.moduleId);
      const wallMs = span?.end === undefined ? 0 : span.end - span.start;
      return { file: relative(this.#root, module.moduleId), project: module.project.name, tests: [...module.children.allTests()].length, wallMs, cpuMs: module.meta().cpuMs };
    });
  }

  /** Each test/<folder>'s wall time while the run had its files running, longest first. */
  #folders(testModules: ReadonlyArray<TestModule>): [string, FolderTimes][] {
    const folders = new Map<string, { start: number; end: number; sum: number; files: number; tests: number }>();
    for (const module of testModules) {
      const span = this.#spans.get(module.moduleId);
      if (span?.end === undefined) continue;
      const folder = relative(this.#root, module.moduleId).split('/').slice(0, 2).join('/');
      const row = folders.get(folder) ?? { start: span.start, end: span.end, sum: 0, files: 0, tests: 0 };
      row.start = Math.min(row.start, span.start);
      row.end = Math.max(row.end, span.end);
      row.sum += span.end - span.start;
      row.files++;
      row.tests += [...module.children.allTests()].length;
      folders.set(folder, row);
    }
    return [...folders]
      .map(([folder, row]): [string, FolderTimes] => [folder, { wall: row.end - row.start, sum: row.sum, files: row.files, tests: row.tests }])
      .sort((a, b) => b[1].wall - a[1].wall);
  }
}

interface FileTimes {
  file: string;
  project: string;
  tests: number;
  wallMs: number;
  cpuMs: number | undefined;
}

interface FolderTimes {
  wall: number;
  sum: number;
  files: number;
  tests: number;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1).padStart(6)} s`;
}
