import OpenAI, { toFile } from 'openai';

/** The statuses after which a batch changes no more. */
const kTerminal = new Set(['completed', 'failed', 'expired', 'cancelled']);
/** Sent as the key to servers that need none (as the openai executor does). */
const kNoKey = 'not-needed';
/** setTimeout's ceiling: how a call without a timeout tells the SDK "no timeout". */
const kNoTimeoutMs = 2 ** 31 - 1;

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

  /** Creates a batch of chat completions over an uploaded file, within OpenAI's only window (24h). */
  create(inputFileId: string): Promise<Batch> {
    return this.#client.batches.create({
      input_file_id: inputFileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { source: 'csv-wave' },
    });
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
