import type { AttemptReply, AttemptRequest } from '../executors/messages.js';

/**
 * Where attempts run: the one boundary between the engine and the machinery that runs
 * tasks. Requests and replies are plain JSON (executors/messages.ts), so a backend may run
 * them on this machine's worker threads (local/local-backend.ts) or send them elsewhere.
 * A backend never writes the session folder: the engine writes what the reply carries.
 */
export interface ExecutionBackend {
  /**
   * Runs one attempt and resolves with its reply; an attempt that fails resolves with an
   * error reply, never rejects. Aborting `signal` rejects at once with an AbortError (the
   * signal's reason) and drops whatever the attempt answers later. Without a signal only
   * cancelAll ends the attempt (a run cancels everything at once; no per-attempt listener).
   *
   * `replied`, when the backend tells it, hears the reply first, once: a backend that
   * limits model requests tells it before the attempt's slot goes to another attempt, so
   * that the run's budget has counted its tokens before the next request begins. A backend
   * may leave it untold; the caller then takes the reply from the promise.
   */
  submit(request: AttemptRequest, signal?: AbortSignal, replied?: (reply: AttemptReply) => void): Promise<AttemptReply>;
  /**
   * Ends every attempt that is running (a stopping run took its tasks back): their submits
   * reject with an AbortError. May be called again, after close too, for what was still
   * starting.
   */
  cancelAll(): Promise<void>;
  /** Stops taking attempts and frees what the backend holds (threads, connections). */
  close(): Promise<void>;
  /**
   * The run's budget is spent: the attempts submitted that have not begun (waiting for an
   * endpoint slot, or for their batch to go out) are not begun; each submit rejects with
   * AttemptNotRun, and the task goes back to pending. Attempts already begun run on.
   * Optional: a backend without it begins every attempt it was given.
   */
  holdBack?(): void;
  /**
   * Ends what the attempts a run took back may have left running beyond cancelAll (local:
   * what their commands started outside their process groups, setsid). Called once, after
   * the last cancelAll of a run that took tasks back. Optional: nothing outlives a cancel.
   */
  sweep?(): void;
  /**
   * Attempts run as jobs elsewhere (bullmq): the job of each, which the journal's start and
   * finish entries name. Optional: a backend without jobs leaves them out.
   */
  readonly jobs?: AttemptJobs;
}

/** The jobs of a backend's attempts, for the journal (OutcomeSink). */
export interface AttemptJobs {
  /** The job of an attempt, which its start entry records before the job is added (a resume awaits again only a job its journal names). */
  started(taskId: string, attempt: number): string;
  /** The job whose reply finished the attempt, which the finish entry records, to find the job in Redis. */
  finished(taskId: string, attempt: number): string | undefined;
}

/** A submit's rejection when the backend held the attempt back before it began (holdBack): nothing ran, nothing was spent. */
export class AttemptNotRun extends Error {
  constructor() {
    super('The attempt was held back before it began: the run is out of budget');
    this.name = 'AttemptNotRun';
  }
}

/** The error a submit rejects with when it is aborted or cancelled: the signal's reason, or an AbortError. */
export function abortError(reason?: unknown): Error {
  if (reason instanceof Error) return reason;
  return new DOMException('The attempt was cancelled', 'AbortError');
}
