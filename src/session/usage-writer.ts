import type { SessionFileWriter } from '../layout.js';
import { appendUsageLines, batchAnswerOf, batchAnswersIn, checkedRequests, usageLines, type RequestUsage, type UsageLine } from '../knowledge/usage.js';
import type { PriceTable } from '../knowledge/pricing.js';

export interface UsageWriterSetup {
  /** The session's writer: usage.ndjson is appended through it. */
  files: SessionFileWriter;
  /** Prices by model, to put each request's cost in its usage line. @default none */
  pricing?: PriceTable | undefined;
  /** Told the lines written (the run's budget), each line once. */
  onUsage?: ((lines: readonly UsageLine[]) => void) | undefined;
  warn: (message: string) => void;
}

/**
 * Writes usage.ndjson's lines for one run, each request once. A model request's tokens may
 * come twice: at once from its worker thread (a live report, usage-channel.ts), then in the
 * reply of its attempt, and the two travel on different channels, so either may come first.
 * A request is known by its task, attempt and request number: attempts of a task are
 * numbered up from 1 within a run, and once an attempt's reply is written, every request of
 * it (and of its earlier attempts) is written, so a live report that comes later is old news.
 *
 * A request a batch line answered is known by that line: a batch answer that a run took
 * and wrote, then was killed before it journaled the task's result, is taken again by the
 * resume, and its tokens, billed once, are not written twice.
 */
export class UsageWriter {
  readonly #setup: UsageWriterSetup;
  /** Requests written from a live report whose attempt's reply has not come (yet: a cancelled one never comes). */
  readonly #live = new Set<string>();
  /** The last attempt of each task whose reply was written. */
  readonly #replied = new Map<string, number>();
  /** The batch answers usage.ndjson holds: read at the first one this run writes (only a --batch run pays for it). */
  #batchAnswers: Set<string> | undefined;

  constructor(setup: UsageWriterSetup) {
    this.#setup = setup;
  }

  /** One request's tokens, reported as its answer arrived. */
  live(taskId: string, attempt: number, request: RequestUsage): void {
    if ((this.#replied.get(taskId) ?? 0) >= attempt) return;
    const [checked] = checkedRequests([request]);
    if (checked === undefined) return;
    const key = requestKey(taskId, attempt, checked.request);
    if (this.#live.has(key)) return;
    this.#live.add(key);
    this.#write(taskId, attempt, [checked]);
  }

  /**
   * The tokens of each model request of an attempt that came back, whatever becomes of it
   * (finished, retried, repaired, timed out): those no live report wrote. A reply may come
   * from another thread or machine, so its list is checked (checkedRequests).
   */
  reply(taskId: string, attempt: number, requests: unknown): void {
    this.#replied.set(taskId, Math.max(attempt, this.#replied.get(taskId) ?? 0));
    const unwritten = checkedRequests(requests).filter((request) => !this.#live.delete(requestKey(taskId, attempt, request.request)));
    this.#write(taskId, attempt, unwritten);
  }

  /** A line that cannot be written is a warning; the budget counts it all the same. */
  #write(taskId: string, attempt: number, given: readonly RequestUsage[]): void {
    const { files, pricing, warn } = this.#setup;
    const requests = given.filter((request) => this.#firstOfBatchAnswer(request));
    if (requests.length === 0) return;
    const model = requests[0]!.model;
    const price = pricing !== undefined && Object.hasOwn(pricing, model) ? pricing[model] : undefined;
    const lines = usageLines(taskId, attempt, requests, price);
    try {
      appendUsageLines(files, lines);
    } catch (error) {
      warn(`${taskId}: the tokens of attempt ${attempt} were not written to usage.ndjson: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.#setup.onUsage?.(lines);
  }

  /** False for a batch answer usage.ndjson holds already; true, and remembered, for any other request. */
  #firstOfBatchAnswer(request: RequestUsage): boolean {
    const answer = batchAnswerOf(request);
    if (answer === undefined) return true;
    try {
      this.#batchAnswers ??= batchAnswersIn(this.#setup.files.dir);
    } catch {
      // Unreadable, it cannot be written either: the write's own warning says so.
      this.#batchAnswers = new Set();
    }
    if (this.#batchAnswers.has(answer)) return false;
    this.#batchAnswers.add(answer);
    return true;
  }
}

/** Task ids never hold a newline (they name files): the key cannot be read two ways. */
function requestKey(taskId: string, attempt: number, request: number): string {
  return `${taskId}\n${attempt}\n${request}`;
}
