/**
 * What the journal keeps of the Batch API mode (session/journal.ts): a batch about to be
 * created (its launch, with the marker its metadata will carry), the batch once created,
 * with the request lines it holds, and its end once its answers were taken (or it was
 * given up). A batch or a launch without an end is open: its entry outlives the journal's
 * checkpoints, so that after a kill -9 `resume` re-attaches to it instead of sending the
 * same tasks again; a launch is looked up by its marker (the batch may have been made in
 * the one round trip before its own entry).
 */

/** One request line of a batch: its custom_id, the task it answers and which request of the attempt it is (1 first, 2 the repair). */
export interface BatchRequestRecord {
  custom_id: string;
  task: string;
  request: number;
}

/** The journal entries of batches. */
export type BatchJournalEntry =
  /**
   * A batch is about to be uploaded and created with `launch` in its metadata (ts: when,
   * to bound the look-up). Written before the upload: a crash before the batch's own entry
   * leaves this, and a resume finds the batch by its marker, or knows none was made.
   */
  | { type: 'batch-launch'; launch: string; ts: string; requests: BatchRequestRecord[] }
  /** A batch was created on the server (input_file: the uploaded JSONL); `launch`: the marker it was made with. */
  | { type: 'batch'; batch: string; input_file: string; requests: BatchRequestRecord[]; launch?: string }
  /** The batch's answers were taken, or it was cancelled or given up: nothing waits on it. */
  | { type: 'batch-end'; batch: string }
  /** The launch made no batch (its upload or create failed, or a resume did not find it): nothing waits on it. */
  | { type: 'batch-launch-end'; launch: string };

export type CreatedBatch = Extract<BatchJournalEntry, { type: 'batch' }>;
export type LaunchedBatch = Extract<BatchJournalEntry, { type: 'batch-launch' }>;
/** A batch not ended: created, or launched and not (yet) known to be created. */
export type OpenBatch = CreatedBatch | LaunchedBatch;

const kBatchEntryTypes: ReadonlySet<string> = new Set(['batch-launch', 'batch', 'batch-end', 'batch-launch-end']);

/** Whether a journal entry is one of the batch mode's (it changes no task). */
export function isBatchEntry(entry: { type: string }): entry is BatchJournalEntry {
  return kBatchEntryTypes.has(entry.type);
}

/** The entry that ends an open batch or launch. */
export function endOf(open: OpenBatch): BatchJournalEntry {
  return open.type === 'batch' ? { type: 'batch-end', batch: open.batch } : { type: 'batch-launch-end', launch: open.launch };
}

/**
 * Follows one entry in `open` (a map by key of what is open, to a value the caller
 * chooses: the entry, or its line): a launch or a batch opens, an end closes, and a batch
 * made by a launch closes that launch. Entries of another shape (a hand-edited journal) are ignored.
 */
export function followBatchEntry<V>(open: Map<string, V>, entry: { type: string }, value: V): void {
  const { batch, launch, requests } = entry as { batch?: unknown; launch?: unknown; requests?: unknown };
  switch (entry.type) {
    case 'batch-launch':
      if (typeof launch === 'string' && Array.isArray(requests)) open.set(launchKey(launch), value);
      return;
    case 'batch':
      if (typeof batch !== 'string' || !Array.isArray(requests)) return;
      if (typeof launch === 'string') open.delete(launchKey(launch));
      open.set(batchKey(batch), value);
      return;
    case 'batch-end':
      if (typeof batch === 'string') open.delete(batchKey(batch));
      return;
    case 'batch-launch-end':
      if (typeof launch === 'string') open.delete(launchKey(launch));
  }
}

/** The key of an open batch or launch in followBatchEntry's map. */
export function openKey(open: OpenBatch): string {
  return open.type === 'batch' ? batchKey(open.batch) : launchKey(open.launch);
}

const batchKey = (id: string) => `batch ${id}`;
const launchKey = (launch: string) => `launch ${launch}`;

/** The batches and launches the entries opened and did not end, in the order they were opened. */
export function openBatches(entries: readonly { type: string }[]): OpenBatch[] {
  const open = new Map<string, OpenBatch>();
  for (const entry of entries) followBatchEntry(open, entry, entry as OpenBatch);
  return [...open.values()];
}
