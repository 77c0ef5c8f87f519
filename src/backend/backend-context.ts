import type { BatchJournalEntry, OpenBatch } from './openai-batch/batch-record.js';
import type { BatchProgress } from './openai-batch/batch-watch.js';

/**
 * What a backend is given of the run it serves (openBackend): the session, what an earlier
 * run left out, and the run's ears. A backend never writes the session folder: what it must
 * keep (its batches) it hands to `record`, and the run's journal holds it.
 */
export interface BackendContext {
  sessionDir: string;
  /**
   * The session's id (`.csv-wave/session-id`), for a backend that names its work after the
   * session (bullmq: its queue and jobs). Made on the first ask, and anew in a copy of the
   * folder, by the session layer, which keeps the file: asked only by a backend that needs it.
   */
  sessionId(): string;
  /** The session as the user named it, for the command a stop suggests (`csv-wave resume <path>`). */
  path: string;
  /** The tasks this run runs. */
  pending: ReadonlySet<string>;
  /** What an interrupted run of the session left out, as its journal names it. */
  left: {
    /** Its open OpenAI batches (--batch). */
    batches: readonly OpenBatch[];
    /** Its jobs that this run awaits again, by task id (--backend bullmq; their attempt 1). */
    jobs: ReadonlyMap<string, string>;
  };
  /** Appends one of the backend's own entries (a batch, its launch, its end) to the run's journal. */
  record(entry: BatchJournalEntry): void;
  /** Makes the run's journal durable now: what `record` appended, and every start so far. */
  flush(): void;
  /**
   * The backend lost the attempts out (Redis away too long, another run took the session
   * over), and says why and what to do: the run stops, and their tasks go back to pending.
   */
  lost(explanation: string): void;
  warn(message: string): void;
  /** How many workers serve the session now (--backend bullmq). */
  workersConnected(count: number): void;
  /**
   * An attempt waited in a queue for a worker, and one took it now (--backend bullmq): the
   * task runs from here. Told at most once per attempt; what it changes is only shown.
   */
  attemptRunning(taskId: string, attempt: number): void;
  /** Where the open batches are (--batch). */
  batchProgress(progress: BatchProgress): void;
}
