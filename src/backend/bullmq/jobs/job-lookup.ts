import type { ClientContext, Redis, Result } from 'ioredis';

/** What a look-up finds of one job in Redis. */
export type JobState =
  /** No such job: never added, removed, or lost with a Redis that restarted without its data. */
  | { kind: 'missing' }
  /** Added, and no worker has taken it yet. */
  | { kind: 'waiting' }
  /** Taken by a worker (`processedOn`), not finished yet: running, or back in the queue after its worker died. */
  | { kind: 'taken' }
  /** Finished: the worker's return value (as BullMQ stored it, JSON text) or BullMQ's reason for failing it. */
  | { kind: 'completed'; returnvalue: unknown }
  | { kind: 'failed'; reason: string }
  /** Finished with a return value of `bytes`, more than the look-up was to read: left in Redis unread. */
  | { kind: 'oversized'; bytes: number };

declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext> {
    csvWaveJobState(key: string, maxReplyBytes: number, maxReasonBytes: number): Result<(string | number | null)[], Context>;
  }
}

/** The most bytes of a failed job's reason read: BullMQ's own are one line; the reply keeps 4,000 characters of it. */
const kMaxReasonBytes = 64 * 1024;

/**
 * One job's state, read in Redis: `timestamp` is set on every job (its absence means no
 * job), `processedOn` once a worker took it, `finishedOn` on a finished one, `failedReason`
 * on a failed one (its first bytes only), and the return value only when it is at most
 * ARGV[1] bytes (HSTRLEN): a larger one never leaves Redis, only its size does.
 */
const kJobStateScript = `
local fields = redis.call('HMGET', KEYS[1], 'timestamp', 'finishedOn', 'processedOn')
if not fields[1] then return {} end
if not fields[2] then
  if fields[3] then return {fields[1], '', 'taken'} end
  return {fields[1]}
end
if redis.call('HSTRLEN', KEYS[1], 'failedReason') > 0 then
  return {fields[1], fields[2], 'failed', string.sub(redis.call('HGET', KEYS[1], 'failedReason'), 1, tonumber(ARGV[2]))}
end
local size = redis.call('HSTRLEN', KEYS[1], 'returnvalue')
if size > tonumber(ARGV[1]) then return {fields[1], fields[2], 'oversized', size} end
return {fields[1], fields[2], 'completed', redis.call('HGET', KEYS[1], 'returnvalue')}
`;

const defined = new WeakSet<Redis>();

/**
 * Looks up many jobs in one round trip: a pipeline of one small script per job (see
 * kJobStateScript), instead of BullMQ's `getJob`, which reads and parses the whole job
 * (its data holds the attempt's whole request) one round trip each. A return value larger
 * than `maxBytesOf(id)` is not read: a worker, or anyone who can write to Redis, cannot
 * make the look-up bring 50 MB over each second. Rejects when Redis does not answer.
 *
 * @param keyOf the job's hash key (`Queue.toKey(id)`)
 */
export async function lookUpJobs(
  redis: Redis,
  keyOf: (id: string) => string,
  ids: readonly string[],
  maxBytesOf: (id: string) => number,
): Promise<Map<string, JobState>> {
  if (!defined.has(redis)) {
    redis.defineCommand('csvWaveJobState', { numberOfKeys: 1, lua: kJobStateScript, readOnly: true });
    defined.add(redis);
  }
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.csvWaveJobState(keyOf(id), maxBytesOf(id), kMaxReasonBytes);
  const results = (await pipeline.exec()) ?? [];
  const states = new Map<string, JobState>();
  ids.forEach((id, index) => {
    const [error, fields] = results[index] ?? [new Error('no answer'), null];
    if (error) return;
    states.set(id, stateOf(fields as (string | number | null)[]));
  });
  return states;
}

function stateOf([timestamp, finishedOn, kind, value]: (string | number | null | undefined)[]): JobState {
  if (timestamp == null) return { kind: 'missing' };
  if (kind === 'taken') return { kind: 'taken' };
  if (finishedOn == null) return { kind: 'waiting' };
  if (kind === 'failed') return { kind: 'failed', reason: String(value) };
  if (kind === 'oversized') return { kind: 'oversized', bytes: Number(value) };
  return { kind: 'completed', returnvalue: storedValue(typeof value === 'string' ? value : null) };
}

/** BullMQ stores a return value as JSON text (a worker's reply text is thus a JSON string); one it cannot parse is passed on as it is. */
function storedValue(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The keys of a map in turn, `batch` at a time, going on from where the last batch stopped
 * and round again from the oldest at the end. A live iterator of the map, not a copy of its
 * keys: 100,000 awaited jobs looked at each second were 800 KB of garbage a second.
 */
export class KeysInTurn {
  readonly #map: Map<string, unknown>;
  readonly #batch: number;
  #cursor: Iterator<string>;

  constructor(map: Map<string, unknown>, batch: number) {
    this.#map = map;
    this.#batch = batch;
    this.#cursor = map.keys();
  }

  /** The next keys: no key twice in one batch (at most the map's size of them). */
  next(): string[] {
    const keys: string[] = [];
    let restarted = false;
    while (keys.length < this.#batch && keys.length < this.#map.size) {
      const next = this.#cursor.next();
      if (!next.done) {
        keys.push(next.value);
        continue;
      }
      if (restarted) break;
      restarted = true;
      this.#cursor = this.#map.keys();
    }
    return keys;
  }
}
