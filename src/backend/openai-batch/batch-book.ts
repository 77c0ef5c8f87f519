import { lineAnswer, type LineAnswer, type OutputLine } from './batch-lines.js';
import type { BatchRequestRecord, CreatedBatch } from './batch-record.js';
import type { EndedBatch } from './batch-watch.js';

/** What a request without an answer line gets, by how its batch ended. */
export type Missing = EndedBatch['missing'];

/** An answer for an attempt: its line's answer (undefined: the batch has none for it), its batch and its request number. */
export interface BookedAnswer<W> {
  waiting: W;
  batch: string;
  record: BatchRequestRecord;
  answer: LineAnswer | undefined;
  missing: Missing;
}

/**
 * Which batch line answers which attempt: the batches this run waits on, by id and
 * custom_id, and the lines of batches an earlier run left open, claimed by task id when
 * their task is submitted again (its answer may have come in before that).
 */
export class BatchBook<W> {
  readonly #batches = new Map<string, Map<string, { record: BatchRequestRecord; waiting?: W }>>();
  /** The batch and line of each task of an open batch that no submit asked for yet. */
  readonly #unclaimed = new Map<string, { batch: string; record: BatchRequestRecord }>();
  /** Answers of an earlier run's batch that came before their task was submitted again. */
  readonly #early = new Map<string, Omit<BookedAnswer<W>, 'waiting'>>();

  constructor(open: readonly CreatedBatch[]) {
    for (const batch of open) this.open(batch);
  }

  /** A batch an earlier run created and did not end: its lines wait for their tasks to be submitted again. */
  open(batch: CreatedBatch): void {
    this.#batches.set(batch.batch, new Map(batch.requests.map((record) => [record.custom_id, { record }])));
    for (const record of batch.requests) this.#unclaimed.set(record.task, { batch: batch.batch, record });
  }

  /** The batches not ended yet. */
  ids(): string[] {
    return [...this.#batches.keys()];
  }

  add(batchId: string, lines: readonly { record: BatchRequestRecord; waiting: W }[]): void {
    this.#batches.set(batchId, new Map(lines.map((line) => [line.record.custom_id, line])));
  }

  delete(batchId: string): void {
    this.#batches.delete(batchId);
  }

  /** An earlier run's line of this task, now waited on by `waiting`: its answer if it came, else the batch to watch. */
  claim(taskId: string, waiting: W): { answer: BookedAnswer<W> } | { batch: string; record: BatchRequestRecord } | undefined {
    const early = this.#early.get(taskId);
    if (early) {
      this.#early.delete(taskId);
      return { answer: { ...early, waiting } };
    }
    const open = this.#unclaimed.get(taskId);
    if (!open) return undefined;
    this.#unclaimed.delete(taskId);
    const line = this.#batches.get(open.batch)?.get(open.record.custom_id);
    if (line) line.waiting = waiting;
    return open;
  }

  /** An ended batch's answers for the attempts that wait on them; the answers of lines no one claimed yet are kept for their task. */
  take(batchId: string, output: Map<string, OutputLine>, missing: Missing): BookedAnswer<W>[] {
    const lines = this.#batches.get(batchId);
    this.#batches.delete(batchId);
    const answers: BookedAnswer<W>[] = [];
    for (const [customId, { record, waiting }] of lines ?? []) {
      const line = output.get(customId);
      const answer = line === undefined ? undefined : lineAnswer(line);
      if (waiting !== undefined) {
        answers.push({ waiting, batch: batchId, record, answer, missing });
      } else if (this.#unclaimed.get(record.task)?.batch === batchId) {
        this.#unclaimed.delete(record.task);
        this.#early.set(record.task, { batch: batchId, record, answer, missing });
      }
    }
    return answers;
  }
}
