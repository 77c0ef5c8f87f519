/**
 * What the journal keeps of the Batch API mode (engine/journal.ts): a batch once it is
 * created, with the request lines it holds, and its end once its answers were taken (or
 * it was given up). A batch without an end is open: its entry outlives the journal's
 * checkpoints, so that after a kill -9 `resume` re-attaches to it instead of sending the
 * same tasks again.
 */

/** One request line of a batch: its custom_id, the task it answers and which request of the attempt it is (1 first, 2 the repair). */
export interface BatchRequestRecord {
  custom_id: string;
  task: string;
  request: number;
}

/** The journal entries of batches. */
export type BatchJournalEntry =
  /** A batch was created on the server (input_file: the uploaded JSONL). */
  | { type: 'batch'; batch: string; input_file: string; requests: BatchRequestRecord[] }
  /** The batch's answers were taken, or it was cancelled or given up: nothing waits on it. */
  | { type: 'batch-end'; batch: string };

export type OpenBatch = Extract<BatchJournalEntry, { type: 'batch' }>;

/** The batches the entries created and did not end, in the order they were created. */
export function openBatches(entries: readonly { type: string }[]): OpenBatch[] {
  const open = new Map<string, OpenBatch>();
  for (const entry of entries) {
    if (entry.type === 'batch') {
      const batch = entry as OpenBatch;
      if (typeof batch.batch === 'string' && Array.isArray(batch.requests)) open.set(batch.batch, batch);
    } else if (entry.type === 'batch-end') {
      open.delete((entry as unknown as { batch: string }).batch);
    }
  }
  return [...open.values()];
}
