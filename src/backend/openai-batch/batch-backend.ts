import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { maxTokensFieldsFor } from '../../executors/openai/answer-turn.js';
import { classifyCallError } from '../../executors/openai/errors.js';
import { finishAttempt } from '../../executors/finish-attempt.js';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { describe } from '../../executors/module.js';
import { RolePrompts, systemPrompt } from '../../executors/openai/prompt.js';
import { messageChars, requestUsage } from '../../executors/openai/request-usage.js';
import type { AttemptOutcome } from '../../executors/types.js';
import { withInputNotes } from '../../executors/worker.js';
import { sumUsage, type RequestUsage } from '../../knowledge/usage.js';
import { abortError, AttemptNotRun, type ExecutionBackend } from '../execution-backend.js';
import { BatchApi, type Batch, type ChatBody } from './batch-api.js';
import * as lines from './batch-lines.js';
import type { BodySettings, LineAnswer, Message, OutputLine } from './batch-lines.js';
import type { BatchRepair } from '../../option-table.js';
import { BatchQueue, type QueuedLine } from './batch-queue.js';
import type { BatchJournalEntry, CreatedBatch, LaunchedBatch, OpenBatch } from './batch-record.js';
import { BatchBook, type Missing } from './batch-book.js';
import { BatchWatch, type BatchProgress } from './batch-watch.js';

export interface BatchBackendOptions {
  model: string;
  baseUrl?: string | undefined;
  promptsDir?: string | undefined;
  maxTokens?: number | undefined;
  /** Where a repair request goes: into the next batch, or at once as a synchronous call. */
  repair: BatchRepair;
  /** Cancel the running batches when the run is stopped (cancelAll); else they run on for a later resume. */
  cancelOnStop: boolean;
  /** The longest wait between two polls of a batch, in milliseconds. */
  maxPollMs: number;
  /**
   * Batches an earlier run created or launched and did not end: their tasks are answered
   * from them, not sent again (a launch is looked up by its marker first).
   */
  open: readonly OpenBatch[];
  /** Journals a batch entry: a launch durably before its upload, a new batch before it is polled; an end after the results it gave. */
  record: (entry: BatchJournalEntry) => void;
  progress: (progress: BatchProgress) => void;
  warn: (message: string) => void;
}

/** Which line of which batch answered a request. */
interface BatchLine {
  batch: string;
  customId: string;
}

/** A submitted attempt waiting for its answer. */
interface Waiting {
  request: AttemptRequest;
  /** The conversation so far: the prompt, and for a repair the bad answer and the repair request. */
  messages: Message[];
  /** Which request of the attempt is out: 1 first, 2 the repair. */
  n: number;
  /**
   * The tokens of each answered request, as the executor records them (one usage.ndjson line
   * each); those answered through the Batch API are marked `batch`, priced at its discount.
   */
  requests: RequestUsage[];
  /** What the contract dropped from the answer (unasked supervision fields): warnings, as the executor's. */
  notes: string[];
  resolve: (reply: AttemptReply) => void;
  reject: (error: Error) => void;
}

/**
 * Runs model attempts through OpenAI's Batch API: the attempts submitted in one turn of the
 * event loop (a wave's, or with eager the tasks that became ready together) become one
 * batch, a JSONL file of the same chat requests the openai executor sends. Each batch is
 * journaled once created and polled with backoff (batch-watch.ts); its answers are judged
 * like synchronous ones, a bad one repaired in the next batch or at once (`repair`).
 *
 * It sits behind the ExecutionBackend boundary, so the scheduler's rules stay as they are:
 * an attempt is a submit that resolves with its reply, however many hours later; a failed
 * line is an error reply the engine retries by class (a retry is a new submit, so it goes
 * into the next batch).
 */
export class BatchBackend implements ExecutionBackend {
  readonly #options: BatchBackendOptions;
  readonly #api: BatchApi;
  readonly #prompts: RolePrompts;
  readonly #body: BodySettings;
  /** Attempts waiting to go out in the next batch. */
  readonly #queue = new BatchQueue<Waiting>(
    (waiting) => this.#render(waiting),
    (chunk) => this.#launch(chunk),
  );
  /** Batches being uploaded and created. */
  readonly #launches = new Set<Promise<void>>();
  readonly #book: BatchBook<Waiting>;
  readonly #watches = new Map<string, BatchWatch>();
  readonly #out = new Set<Waiting>();
  readonly #stop = new AbortController();
  #closed = false;
  #cancelled: Promise<void> | undefined;
  /** Batches whose answers were all handed out, to be ended in the journal after those answers. */
  readonly #ends: string[] = [];
  /** The budget is spent: no first request goes out any more (holdBack). */
  #held = false;
  /** The look-up of the batches an earlier run launched; submits wait for it, to re-attach to them. */
  #recovering: Promise<void> | undefined;

  constructor(options: BatchBackendOptions) {
    this.#options = options;
    this.#api = new BatchApi({ baseUrl: options.baseUrl });
    this.#prompts = new RolePrompts(options.promptsDir);
    this.#body = {
      model: options.model,
      maxTokens: options.maxTokens,
      maxTokensFields: maxTokensFieldsFor(this.#api.baseUrl),
    };
    this.#book = new BatchBook(options.open.filter((open): open is CreatedBatch => open.type === 'batch'));
    // Every poll, download and repair listens to it: many batches at once are no leak.
    setMaxListeners(0, this.#stop.signal);
    const launches = options.open.filter((open): open is LaunchedBatch => open.type === 'batch-launch');
    if (launches.length > 0) this.#recovering = this.#recover(launches).finally(() => (this.#recovering = undefined));
  }

  /**
   * An earlier run was killed between launching a batch and journaling it: the server may
   * have made it. Found by the marker in its metadata, it is journaled and re-attached to
   * like any open batch; not found, its tasks go out again.
   */
  async #recover(launches: readonly LaunchedBatch[]): Promise<void> {
    for (const launch of launches) {
      let found: Batch | undefined;
      try {
        found = await this.#api.findLaunched(launch.launch, Date.parse(launch.ts) / 1000);
      } catch (error) {
        this.#options.warn(
          `Could not look for the batch an earlier run was creating (${describe(error)}): its tasks are sent again; a batch the server made for them is left there (its metadata csv_wave_launch is ${launch.launch})`,
        );
      }
      if (found === undefined) {
        this.#options.record({ type: 'batch-launch-end', launch: launch.launch });
        continue;
      }
      const batch: CreatedBatch = { type: 'batch', batch: found.id, input_file: found.input_file_id, requests: launch.requests, launch: launch.launch };
      this.#options.record(batch);
      this.#book.open(batch);
    }
  }

  submit(request: AttemptRequest, signal?: AbortSignal): Promise<AttemptReply> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.#closed) return Promise.reject(new Error('The batch backend is closed: it runs no more attempts'));
    return new Promise<AttemptReply>((resolve, reject) => {
      const waiting: Waiting = { request, messages: [], n: 1, requests: [], notes: [], resolve, reject };
      try {
        if (request.prompt === undefined) throw new Error('The openai executor needs the prompt context of the task');
        waiting.messages = [
          { role: 'system', content: systemPrompt(request.pipeline ?? 'generic') },
          { role: 'user', content: this.#prompts.render(request.task, request.prompt) },
        ];
      } catch (error) {
        resolve(this.#reply(waiting, { kind: 'error', errorClass: 'task-failure', error: describe(error) }));
        return;
      }
      this.#out.add(waiting);
      signal?.addEventListener('abort', () => this.#drop(waiting, abortError(signal.reason)), { once: true });
      if (this.#recovering) void this.#recovering.then(() => this.#place(waiting));
      else this.#place(waiting);
    });
  }

  /** A submitted attempt waits for an earlier run's batch that holds its task, else goes into the next batch (unless held back). */
  #place(waiting: Waiting): void {
    if (!this.#out.has(waiting) || this.#reattach(waiting)) return;
    if (this.#held) this.#notRun(waiting);
    else this.#enqueue(waiting);
  }

  /** An attempt whose task an earlier run's batch holds waits for that answer instead of going out again. */
  #reattach(waiting: Waiting): boolean {
    const claimed = this.#book.claim(waiting.request.task.id, waiting);
    if (!claimed) return false;
    if ('answer' in claimed) {
      waiting.n = claimed.answer.record.request;
      this.#answered(waiting, claimed.answer.answer, claimed.answer.missing, { batch: claimed.answer.batch, customId: claimed.answer.record.custom_id });
    } else {
      waiting.n = claimed.record.request;
      this.#watch(claimed.batch);
    }
    return true;
  }

  #enqueue(waiting: Waiting): void {
    this.#queue.push(waiting);
  }

  /** The input line of a queued attempt, unless it was taken back meanwhile. */
  #render(waiting: Waiting): { customId: string; line: string } | undefined {
    if (!this.#out.has(waiting)) return undefined;
    const customId = `${waiting.request.task.id}/a${waiting.request.task.attempt}/r${waiting.n}`;
    return { customId, line: lines.inputLine(customId, this.#requestBody(waiting)) };
  }

  #requestBody(waiting: Waiting): ChatBody {
    const { task, prompt } = waiting.request;
    return lines.requestBody(this.#body, { pipeline: prompt?.pipeline ?? 'generic', role: task.row.role ?? '' }, waiting.messages);
  }

  /**
   * Journals a chunk's launch, uploads it, creates its batch marked with the launch,
   * journals the batch, then watches it. A failure fails its attempts by class.
   */
  #launch(chunk: QueuedLine<Waiting>[]): void {
    const launch = (async () => {
      const booked = chunk.map(({ item: waiting, customId }) => ({ record: { custom_id: customId, task: waiting.request.task.id, request: waiting.n }, waiting }));
      const requests = booked.map((line) => line.record);
      const marker = randomUUID();
      const since = Date.now() / 1000;
      this.#options.record({ type: 'batch-launch', launch: marker, ts: new Date().toISOString(), requests });
      let batch: Batch | undefined;
      let inputFile: string;
      try {
        inputFile = await this.#api.upload(`${chunk.map((item) => item.line).join('\n')}\n`);
        batch = await this.#createOrFind(inputFile, marker, since);
      } catch (error) {
        this.#options.record({ type: 'batch-launch-end', launch: marker });
        const outcome = classifyCallError(error, { stoppedBy: undefined, timeoutMs: 0, baseUrl: this.#api.baseUrl });
        for (const { item } of chunk) this.#settle(item, outcome);
        return;
      }
      this.#options.record({ type: 'batch', batch: batch.id, input_file: inputFile, requests, launch: marker });
      this.#book.add(batch.id, booked);
      this.#watch(batch.id);
    })();
    this.#launches.add(launch);
    void launch.finally(() => this.#launches.delete(launch));
  }

  /**
   * Creates the batch. A create that failed without the server saying no (the connection
   * lost, a 5xx) may have made it all the same: it is looked for by its marker before the
   * failure stands, so that its requests are not sent twice.
   */
  async #createOrFind(inputFile: string, marker: string, since: number): Promise<Batch> {
    try {
      return await this.#api.create(inputFile, marker);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) throw error;
      const found = await this.#api.findLaunched(marker, since).catch(() => undefined);
      if (found === undefined) throw error;
      return found;
    }
  }

  #watch(batchId: string): void {
    if (this.#watches.has(batchId) || this.#stop.signal.aborted) return;
    const watch = new BatchWatch(this.#api, batchId, {
      maxPollMs: this.#options.maxPollMs,
      signal: this.#stop.signal,
      progress: this.#options.progress,
      warn: this.#options.warn,
    });
    this.#watches.set(batchId, watch);
    void watch.ended().then((ended) => {
      this.#watches.delete(batchId);
      if (ended) this.#harvest(ended.batch, ended.lines, ended.missing);
    });
  }

  /** A batch ended: every line goes to the attempt that waits for it (or is kept for it), then the batch is ended in the journal. */
  #harvest(batchId: string, output: Map<string, OutputLine>, missing: Missing): void {
    for (const { waiting, answer, record } of this.#book.take(batchId, output, missing)) {
      this.#answered(waiting, answer, missing, { batch: batchId, customId: record.custom_id });
    }
    // After the results it gave are journaled (they are, within this turn): a crash in between
    // must leave the batch open, for a resume to take them again, never ended without them.
    this.#ends.push(batchId);
    setImmediate(() => this.#recordEnds());
  }

  #recordEnds(): void {
    for (const batch of this.#ends.splice(0)) this.#options.record({ type: 'batch-end', batch });
  }

  /**
   * One answer of a batch (`line`: which batch line it is) or of a synchronous repair (no
   * line): a result, a failure, or a repair sent on.
   */
  #answered(waiting: Waiting, answer: LineAnswer | undefined, missing: Missing | undefined, line: BatchLine | undefined): void {
    if (!this.#out.has(waiting)) return;
    if (answer === undefined) {
      const { errorClass, error } = missing ?? { errorClass: 'transient', error: 'no answer came' };
      return this.#settle(waiting, { kind: 'error', errorClass, error: `No answer: ${error}` });
    }
    if (answer.kind === 'error') return this.#settle(waiting, answer);
    const used = { ...requestUsage(answer.completion, waiting.n, waiting.n === 1 ? 'first' : 'repair', this.#options.model), prompt_chars: messageChars(waiting.messages) };
    // A batch line is billed once: its usage line names it, so that an answer taken again
    // after a crash (its usage written, its result not journaled) is not counted twice.
    waiting.requests.push(line ? { ...used, batch: true, batch_id: line.batch, custom_id: line.customId } : used);
    const task = waiting.request.task;
    const judged = lines.judgeCompletion(answer.completion, { id: task.id, role: task.row.role ?? '' }, waiting.request.prompt?.pipeline ?? 'generic');
    if (judged.kind === 'result') {
      waiting.notes.push(...judged.notes);
      return this.#settle(waiting, { kind: 'result', result: judged.result });
    }
    if (judged.kind !== 'repair') return this.#settle(waiting, judged);
    if (waiting.n >= 2) return this.#settle(waiting, lines.invalidAfterRepair(judged.content, judged.problem));
    waiting.messages = [...waiting.messages, ...lines.repairMessages(task.id, judged.content, judged.problem)];
    waiting.n = 2;
    if (this.#options.repair === 'batch') this.#enqueue(waiting);
    else void this.#repairNow(waiting);
  }

  /** `--batch-repair sync`: the repair as one synchronous chat completion, within the attempt's --timeout. */
  async #repairNow(waiting: Waiting): Promise<void> {
    const timeoutMs = waiting.request.timeoutMs;
    const controller = new AbortController();
    const stop = () => controller.abort();
    this.#stop.signal.addEventListener('abort', stop, { once: true });
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), controller.abort()), timeoutMs) : undefined;
    try {
      const completion = await this.#api.complete(this.#requestBody(waiting), controller.signal, timeoutMs);
      this.#answered(waiting, { kind: 'completion', completion }, undefined, undefined);
    } catch (error) {
      const stoppedBy = timedOut ? 'timeout' : controller.signal.aborted ? 'abort' : undefined;
      this.#settle(waiting, classifyCallError(error, { stoppedBy, timeoutMs, baseUrl: this.#api.baseUrl }));
    } finally {
      clearTimeout(timer);
      this.#stop.signal.removeEventListener('abort', stop);
    }
  }

  #settle(waiting: Waiting, outcome: AttemptOutcome): void {
    if (!this.#out.delete(waiting)) return;
    waiting.resolve(this.#reply(waiting, outcome));
  }

  /** The reply as a worker would give it: checked, cleaned, scrubbed and capped by finishAttempt, with the tokens spent. */
  #reply(waiting: Waiting, outcome: AttemptOutcome): AttemptReply {
    const { task, limits, pipeline } = waiting.request;
    const { requests, notes } = waiting;
    const usage = sumUsage(requests);
    const withUsage: AttemptOutcome = {
      ...outcome,
      ...(usage === undefined ? {} : { usage }),
      ...(requests.length === 0 ? {} : { requests }),
      ...(notes.length === 0 ? {} : { notes: [...(outcome.notes ?? []), ...notes] }),
    };
    return withInputNotes(finishAttempt(task, withUsage, limits ?? {}, pipeline), task.prev_context);
  }

  #drop(waiting: Waiting, error: Error): void {
    if (this.#out.delete(waiting)) waiting.reject(error);
  }

  /**
   * The budget is spent: the first requests waiting for the next batch are not sent (their
   * submits reject with AttemptNotRun, their tasks go back to pending); repairs of attempts
   * whose first answer came go out, as a running attempt finishes.
   */
  holdBack(): void {
    this.#held = true;
    for (const waiting of this.#queue.take((item) => item.n === 1)) this.#notRun(waiting);
  }

  #notRun(waiting: Waiting): void {
    if (this.#out.delete(waiting)) waiting.reject(new AttemptNotRun());
  }

  /**
   * A stopping run took its tasks back: their submits reject, polling stops. The batches
   * run on at the server, open in the journal, for a later resume to re-attach to; with
   * `cancelOnStop` (--cancel-batch) they are cancelled and ended instead.
   */
  cancelAll(): Promise<void> {
    for (const waiting of [...this.#out]) this.#drop(waiting, abortError());
    this.#queue.clear();
    this.#stop.abort();
    // Called again as the run ends: the same work, done once, so that its journal entries come before the journal closes.
    this.#cancelled ??= this.#cancelBatches();
    return this.#cancelled;
  }

  async #cancelBatches(): Promise<void> {
    await Promise.allSettled([...this.#launches, this.#recovering]);
    if (!this.#options.cancelOnStop) return;
    for (const batchId of this.#book.ids()) {
      this.#book.delete(batchId);
      try {
        await this.#api.cancel(batchId);
        this.#options.record({ type: 'batch-end', batch: batchId });
      } catch (error) {
        this.#options.warn(`Could not cancel batch ${batchId} (${describe(error)}): it stays open, and a resume re-attaches to it`);
      }
    }
  }

  /** Stops polling. Batches being created are waited for, so that each one created is journaled. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.clear();
    await Promise.allSettled([...this.#launches, this.#recovering, this.#cancelled]);
    this.#stop.abort();
    this.#recordEnds();
    for (const waiting of [...this.#out]) this.#drop(waiting, new Error('The batch backend was closed'));
  }
}
