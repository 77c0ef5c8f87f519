import OpenAI, { toFile } from 'openai';

/** The statuses after which a batch changes no more. */
const kTerminal = new Set(['completed', 'failed', 'expired', 'cancelled']);
/** Sent as the key to servers that need none (as the openai executor does). */
const kNoKey = 'not-needed';
/** setTimeout's ceiling: how a call without a timeout tells the SDK "no timeout". */
const kNoTimeoutMs = 2 ** 31 - 1;
/** The metadata key of the marker a batch is created with (batch-record.ts, `batch-launch`). */
export const kLaunchKey = 'csv_wave_launch';
/**
 * How far the look-up of a launched batch goes back: batches are listed newest first, and
 * one made before its launch (less this much for the two clocks' difference) is not it.
 */
const kLaunchSkewSeconds = 3600;
/** The most batches a look-up reads (50 pages): an account's long history is not searched to its start. */
const kMaxListed = 5000;

export type Batch = OpenAI.Batches.Batch;
export type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion;
export type ChatBody = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

export function isTerminal(batch: Batch): boolean {
  return kTerminal.has(batch.status);
}

/**
 * The few calls of OpenAI's Files and Batches APIs a batch run makes, through the official
 * client (no retries of its own: a poll that fails is tried again at the next poll, an
 * upload or a create that fails fails its tasks by error class, which the engine retries).
 */
export class BatchApi {
  readonly #client: OpenAI;

  constructor(options: { baseUrl?: string | undefined }) {
    const key = process.env.OPENAI_API_KEY;
    this.#client = new OpenAI({
      apiKey: key !== undefined && key !== '' ? key : kNoKey,
      ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
      maxRetries: 0,
      logLevel: 'off',
    });
  }

  get baseUrl(): string {
    return this.#client.baseURL;
  }

  /** Uploads the JSONL of a batch (purpose `batch`); returns the file's id. */
  async upload(jsonl: string): Promise<string> {
    const file = await toFile(Buffer.from(jsonl, 'utf8'), 'csv-wave-batch.jsonl', { type: 'application/jsonl' });
    return (await this.#client.files.create({ file, purpose: 'batch' })).id;
  }

  /**
   * Creates a batch of chat completions over an uploaded file, within OpenAI's only window
   * (24h), marked with its launch (findLaunched).
   */
  create(inputFileId: string, launch: string): Promise<Batch> {
    return this.#client.batches.create({
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { source: 'csv-wave', [kLaunchKey]: launch },
    });
  }

  /**
   * The batch created with this launch marker, if the server made one: the batches listed
   * newest first, down to those made before the launch (`since`, Unix seconds, less an
   * hour for the clocks' difference) or at most 5,000 of them.
   */
  async findLaunched(launch: string, since: number): Promise<Batch | undefined> {
    let listed = 0;
    for await (const batch of this.#client.batches.list({ limit: 100 })) {
      if (batch.metadata?.[kLaunchKey] === launch) return batch;
      if (++listed >= kMaxListed || batch.created_at < since - kLaunchSkewSeconds) return undefined;
    }
    return undefined;
  }

  retrieve(batchId: string, signal: AbortSignal): Promise<Batch> {
    return this.#client.batches.retrieve(batchId, { signal });
  }

  cancel(batchId: string): Promise<Batch> {
    return this.#client.batches.cancel(batchId);
  }

  /** A file's whole content as text (an output or error file: JSONL). */
  async download(fileId: string, signal: AbortSignal): Promise<string> {
    return (await this.#client.files.content(fileId, { signal })).text();
  }

  /** One chat completion at once (a repair with `--batch-repair sync`). */
  complete(body: ChatBody, signal: AbortSignal, timeoutMs: number): Promise<ChatCompletion> {
    return this.#client.chat.completions.create(body, {
      signal,
      maxRetries: 0,
      timeout: timeoutMs > 0 ? Math.min(timeoutMs + 1000, kNoTimeoutMs) : kNoTimeoutMs,
    });
  }
}
