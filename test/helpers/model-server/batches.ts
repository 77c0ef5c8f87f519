import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * OpenAI's Files and Batches endpoints, as its API reference documents them, for a test
 * model server: `POST /v1/files` (multipart, purpose `batch`), `GET /v1/files/:id/content`,
 * `POST /v1/batches`, `GET /v1/batches` (newest first, `limit` and `after`),
 * `GET /v1/batches/:id`, `POST /v1/batches/:id/cancel`. A batch goes
 * validating → in_progress → finalizing → completed (or failed when its input file is
 * refused, expired, cancelling → cancelled), with `request_counts`, `output_file_id` and
 * `error_file_id`; each line runs through the server's own chat completion (`complete`).
 *
 * Nothing here waits on a clock: a test holds a batch in_progress as long as it likes
 * (`hold`), and each status a client is to see is shown to at least one poll (a batch
 * validating becomes in_progress at a poll; a finished one is finalizing at one poll and
 * completed at the next).
 */

/** Runs one chat completion (the body of a batch line); a closed batch aborts `signal`. */
export type Complete = (body: unknown, signal: AbortSignal) => Promise<{ status: number; body: unknown }>;

/** How a held batch ends: its lines run (complete), it runs out of time (expire), or it fails at the server. */
export type BatchEnding = 'complete' | 'expire' | 'fail';

export interface HeldBatch {
  id: string;
  inputFileId: string;
  customIds: string[];
}

/** What the routes did, in order: a test reads whether a batch was sent twice, polled, cancelled. */
export type BatchRouteEvent =
  | { kind: 'upload'; file: string; purpose: string; lines: number }
  | { kind: 'create'; batch: string; inputFileId: string; customIds: string[] }
  | { kind: 'retrieve'; batch: string; status: string }
  | { kind: 'list'; after: string | null; count: number }
  | { kind: 'cancel'; batch: string }
  | { kind: 'content'; file: string }
  | { kind: 'line'; batch: string; customId: string; status: number };

export interface BatchRoutesOptions {
  /** Called once a batch is in progress; its lines run when the promise resolves. @default each batch completes at once */
  hold?: (batch: HeldBatch) => Promise<BatchEnding>;
  /** Told every call the routes answer. */
  log?: (event: BatchRouteEvent) => void;
}

export type BatchRouteHandler = (req: IncomingMessage, res: ServerResponse, complete: Complete) => Promise<boolean>;

type Status = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

interface StoredFile {
  id: string;
  purpose: string;
  filename: string;
  bytes: Buffer;
  created_at: number;
}

interface StoredBatch {
  object: Record<string, unknown> & { id: string; status: Status; request_counts: { total: number; completed: number; failed: number } };
  lines: { custom_id: string; body: unknown }[];
  output: string[];
  errors: string[];
  /** Aborted when the batch is cancelled: its running completions stop. */
  controller: AbortController;
  /** The statuses the next polls show, one each (every status is seen by at least one poll). */
  next: Status[];
}

const kEndpoint = '/v1/chat/completions';
const kWindowSeconds = 24 * 3600;

/** The routes; the handler answers true when the request was one of them. */
export function batchRoutes(options: BatchRoutesOptions = {}): BatchRouteHandler {
  const files = new Map<string, StoredFile>();
  const batches = new Map<string, StoredBatch>();
  let serial = 0;
  const log = options.log ?? (() => {});
  const now = () => Math.floor(Date.now() / 1000);
  const newId = (prefix: string) => `${prefix}_${(++serial).toString().padStart(6, '0')}`;

  const storeFile = (purpose: string, filename: string, text: string): StoredFile => {
    const file = { id: newId('file'), purpose, filename, bytes: Buffer.from(text, 'utf8'), created_at: now() };
    files.set(file.id, file);
    return file;
  };

  /** Writes the output and error files and moves the batch on to its final status (seen at the next poll). */
  const writeFiles = (batch: StoredBatch) => {
    if (batch.output.length > 0) batch.object.output_file_id = storeFile('batch_output', `${batch.object.id}_output.jsonl`, `${batch.output.join('\n')}\n`).id;
    if (batch.errors.length > 0) batch.object.error_file_id = storeFile('batch_output', `${batch.object.id}_error.jsonl`, `${batch.errors.join('\n')}\n`).id;
  };
  const finish = (batch: StoredBatch, final: Status) => {
    writeFiles(batch);
    // Each status is stamped (`<status>_at`) by the poll that first shows it.
    batch.next.push(...(final === 'completed' ? (['finalizing', 'completed'] as const) : [final]));
  };

  const run = async (batch: StoredBatch) => {
    const ending = options.hold
      ? await options.hold({ id: batch.object.id, inputFileId: String(batch.object.input_file_id), customIds: batch.lines.map((line) => line.custom_id) })
      : 'complete';
    if (batch.object.status !== 'in_progress') return; // cancelled meanwhile
    if (ending === 'fail') {
      batch.object.errors = { object: 'list', data: [{ code: 'server_error', message: 'The batch failed at the server', line: null, param: null }] };
      finish(batch, 'failed');
      return;
    }
    const counts = batch.object.request_counts;
    for (const line of batch.lines) {
      if (ending === 'expire' || batch.object.status !== 'in_progress') {
        const code = ending === 'expire' ? 'batch_expired' : 'batch_cancelled';
        batch.errors.push(JSON.stringify({ id: newId('batch_req'), custom_id: line.custom_id, response: null, error: { code, message: `This request was not run: the batch ${ending === 'expire' ? 'expired' : 'was cancelled'}.` } }));
        counts.failed++;
        continue;
      }
      let answer: { status: number; body: unknown };
      try {
        answer = await complete(line.body, batch.controller.signal);
      } catch (error) {
        answer = { status: 500, body: { error: { message: String(error), type: 'server_error' } } };
      }
      log({ kind: 'line', batch: batch.object.id, customId: line.custom_id, status: answer.status });
      const text = JSON.stringify({ id: newId('batch_req'), custom_id: line.custom_id, response: { status_code: answer.status, request_id: newId('req'), body: answer.body }, error: null });
      if (answer.status === 200) {
        batch.output.push(text);
        counts.completed++;
      } else {
        batch.errors.push(text);
        counts.failed++;
      }
    }
    if (batch.object.status !== 'in_progress') return; // cancelled: the next poll shows it
    finish(batch, ending === 'expire' ? 'expired' : 'completed');
  };
  let complete: Complete = () => Promise.reject(new Error('no completion function'));

  const createBatch = (body: Record<string, unknown>, res: ServerResponse) => {
    const input = files.get(String(body.input_file_id));
    if (!input) return sendError(res, 400, `Invalid 'input_file_id': file ${String(body.input_file_id)} not found`);
    if (input.purpose !== 'batch') return sendError(res, 400, `The input file must be uploaded with purpose 'batch', not '${input.purpose}'`);
    if (body.endpoint !== kEndpoint) return sendError(res, 400, `This server batches only ${kEndpoint}, not ${String(body.endpoint)}`);
    if (body.completion_window !== '24h') return sendError(res, 400, `Invalid 'completion_window': only '24h' is supported`);
    const created = now();
    const batch: StoredBatch = {
      object: {
        id: newId('batch'), object: 'batch', endpoint: kEndpoint, errors: null, input_file_id: input.id, completion_window: '24h',
        status: 'validating', output_file_id: null, error_file_id: null, created_at: created, expires_at: created + kWindowSeconds,
        request_counts: { total: 0, completed: 0, failed: 0 }, metadata: body.metadata ?? null,
      },
      lines: [], output: [], errors: [], controller: new AbortController(), next: [],
    };
    batches.set(batch.object.id, batch);
    const problems = readInput(input.bytes.toString('utf8'), batch.lines);
    log({ kind: 'create', batch: batch.object.id, inputFileId: input.id, customIds: batch.lines.map((line) => line.custom_id) });
    if (problems.length > 0) {
      batch.object.errors = { object: 'list', data: problems };
      batch.next.push('failed');
    } else {
      batch.object.request_counts.total = batch.lines.length;
      batch.next.push('in_progress');
    }
    sendJson(res, 200, batch.object);
  };

  /** A poll: the batch moves to the status it was waiting to show. */
  const retrieve = (batch: StoredBatch, res: ServerResponse) => {
    const next = batch.next.shift();
    if (next !== undefined) {
      batch.object.status = next;
      batch.object[`${next}_at`] = now();
      if (next === 'in_progress') void run(batch);
      // A cancelled batch keeps the answers of the lines that ran before.
      if (next === 'cancelled') writeFiles(batch);
    }
    log({ kind: 'retrieve', batch: batch.object.id, status: batch.object.status });
    sendJson(res, 200, batch.object);
  };

  return async (req, res, completeOne) => {
    complete = completeOne;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/v1/files') {
      const form = await new Request(url, { method, headers: headersOf(req), body: await readBody(req), duplex: 'half' } as RequestInit).formData();
      const file = form.get('file');
      const purpose = String(form.get('purpose') ?? '');
      if (!(file instanceof Blob)) return sendError(res, 400, "Missing 'file'"), true;
      const text = await file.text();
      const stored = storeFile(purpose, (file as File).name ?? 'upload', text);
      log({ kind: 'upload', file: stored.id, purpose, lines: text.split('\n').filter((line) => line.trim() !== '').length });
      sendJson(res, 200, { id: stored.id, object: 'file', bytes: stored.bytes.length, created_at: stored.created_at, filename: stored.filename, purpose, status: 'processed' });
      return true;
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && content) {
      const file = files.get(content[1]!);
      if (!file) return sendError(res, 404, `No such file: ${content[1]}`), true;
      log({ kind: 'content', file: file.id });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.bytes.length });
      res.end(file.bytes);
      return true;
    }
    if (method === 'POST' && path === '/v1/batches') {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse((await readBody(req)).toString('utf8')) as Record<string, unknown>;
      } catch {
        return sendError(res, 400, 'Body is not JSON'), true;
      }
      createBatch(body, res);
      return true;
    }
    if (method === 'GET' && path === '/v1/batches') {
      // Newest first, as OpenAI lists them; a page of `limit` (1 to 100, default 20) after the batch `after`.
      const all = [...batches.values()].reverse().map((batch) => batch.object);
      const after = url.searchParams.get('after');
      const from = after === null ? 0 : all.findIndex((batch) => batch.id === after) + 1;
      const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 20) || 20));
      const data = from === 0 && after !== null ? [] : all.slice(from, from + limit);
      log({ kind: 'list', after, count: data.length });
      sendJson(res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: from + data.length < all.length });
      return true;
    }
    const one = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (one) {
      const batch = batches.get(one[1]!);
      if (!batch) return sendError(res, 404, `No batch found with id '${one[1]}'`), true;
      if (method === 'GET' && !one[2]) return retrieve(batch, res), true;
      if (method === 'POST' && one[2]) {
        log({ kind: 'cancel', batch: batch.object.id });
        const status = batch.object.status;
        if (status !== 'validating' && status !== 'in_progress') return sendError(res, 400, `Cannot cancel a batch with status '${status}'`), true;
        batch.object.status = 'cancelling';
        batch.object.cancelling_at = now();
        batch.controller.abort();
        // It is cancelled at the next poll; lines that were running are aborted.
        batch.next = ['cancelled'];
        sendJson(res, 200, batch.object);
        return true;
      }
    }
    return false;
  };
}

/** Reads a batch's input lines; what is wrong with them, as OpenAI's `errors.data`. */
function readInput(text: string, into: { custom_id: string; body: unknown }[]): { code: string; message: string; line: number; param: string | null }[] {
  const problems: { code: string; message: string; line: number; param: string | null }[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    const line = index + 1;
    let value: { custom_id?: unknown; method?: unknown; url?: unknown; body?: unknown };
    try {
      value = JSON.parse(raw) as typeof value;
    } catch {
      problems.push({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', line, param: null });
      return;
    }
    if (typeof value.custom_id !== 'string' || seen.has(value.custom_id)) {
      problems.push({ code: 'duplicate_custom_id', message: 'The custom_id for this request is missing or a duplicate.', line, param: 'custom_id' });
      return;
    }
    if (value.method !== 'POST' || value.url !== kEndpoint || value.body === null || typeof value.body !== 'object') {
      problems.push({ code: 'invalid_request', message: `Each line must POST a body to ${kEndpoint}.`, line, param: 'url' });
      return;
    }
    seen.add(value.custom_id);
    into.push({ custom_id: value.custom_id, body: value.body });
  });
  if (into.length === 0 && problems.length === 0) problems.push({ code: 'empty_file', message: 'The input file holds no requests.', line: 1, param: null });
  return problems;
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return headers;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: 'invalid_request_error', param: null, code: null } });
}
