import type { TasksTable } from '../csv/tasks-table.js';
import type { PriceTable } from '../knowledge/pricing.js';
import type { RunReport, RunReportFactory } from '../run/run-session.js';
import { WaveContexts } from './wave-contexts.js';
import { writeReport } from './write-report.js';
import { AttemptLinesReader } from '../knowledge/attempt-lines.js';

/** Share of a run's time that rewriting report.html at wave ends may take; past it a wave end is passed over. */
const kMaxShareOfTime = 0.05;

/**
 * Keeps report.html up to date during a run: rewritten at each wave end (unless writing
 * it would take more than 5% of the run's time, as with a huge session and short waves)
 * and always at the end. A report that cannot be written is a warning: it never stops a run.
 */
export class RunReporter implements RunReport {
  readonly #sessionDir: string;
  readonly #table: TasksTable;
  readonly #warn: (message: string) => void;
  readonly #pricing: PriceTable | undefined;
  #lastStart = 0;
  #lastDuration = 0;
  /** The run's wave files, parsed once rather than at every rewrite; those the run writes, never (KnowledgeSink.waveReady). */
  readonly waveContexts = new WaveContexts();
  /** attempts.ndjson, each line parsed once however many times the report is written. */
  readonly #attempts: AttemptLinesReader;

  constructor(sessionDir: string, table: TasksTable, warn: (message: string) => void, pricing?: PriceTable) {
    this.#sessionDir = sessionDir;
    this.#attempts = new AttemptLinesReader(sessionDir);
    this.#table = table;
    this.#warn = warn;
    this.#pricing = pricing;
  }

  waveEnd(): void {
    const now = performance.now();
    if (this.#lastDuration > (now - this.#lastStart) * kMaxShareOfTime) return;
    this.#write();
  }

  final(): void {
    this.#write();
  }

  #write(): void {
    this.#lastStart = performance.now();
    try {
      writeReport(this.#sessionDir, this.#table, { waveContexts: this.waveContexts, pricing: this.#pricing, attempts: this.#attempts });
    } catch (error) {
      this.#warn(`report.html was not written: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.#lastDuration = performance.now() - this.#lastStart;
  }
}

/** report.html kept up to date during a run: what the CLI and the package's `runSession` attach. */
export const htmlReport: RunReportFactory = (sessionDir, table, warn, pricing) => new RunReporter(sessionDir, table, warn, pricing);
