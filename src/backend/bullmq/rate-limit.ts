import { Queue } from 'bullmq';
import { WaveError } from '../../errors.js';
import { bullmqConnection } from './connection.js';
import { queueNameOf } from './names.js';

/** Attempts started per `durationMs` across every worker of a session (`--rate N/s|N/min`). */
export interface RateLimit {
  max: number;
  durationMs: number;
}

/**
 * The queue's limit when the run sets none: so high it never holds a job back, but present,
 * because BullMQ honours a manual pause (a 429's Retry-After, see pauseQueue) only on a
 * queue that has a limit.
 */
const kUnlimited: RateLimit = { max: 2 ** 31, durationMs: 1000 };

const kUnits: Record<string, number> = { s: 1000, sec: 1000, min: 60_000 };

/** Parses `N/s` or `N/min` (N a positive integer); a WaveError USAGE naming `flag` otherwise. */
export function parseRate(text: string, flag: string): RateLimit {
  const match = /^\s*(\d+)\s*\/\s*(s|sec|min)\s*$/.exec(text);
  const max = Number(match?.[1]);
  const durationMs = kUnits[match?.[2] ?? ''];
  if (!match || !Number.isSafeInteger(max) || max < 1 || durationMs === undefined) {
    throw new WaveError('USAGE', `Expected \`${flag}\` to be attempts per second or per minute, as 20/s or 600/min, got \`${text}\``);
  }
  return { max, durationMs };
}

/** The rate as `--rate` writes it. */
export function rateText(rate: RateLimit): string {
  return `${rate.max}/${rate.durationMs === 1000 ? 's' : 'min'}`;
}

/**
 * The session queue's rate limit: BullMQ's global rate limit, kept in the queue's meta in
 * Redis, so every worker of the queue obeys it, whenever it started. `rate`, or none (see
 * kUnlimited) when undefined. The coordinator applies it before its first job, and again
 * with each beat of its registration: a Redis restarted without its data has it back.
 */
export class QueueRate {
  readonly #queue: Queue;
  readonly #rate: RateLimit;

  constructor(url: string, sessionId: string, rate: RateLimit | undefined) {
    this.#queue = new Queue(queueNameOf(sessionId), { connection: bullmqConnection(url) });
    this.#queue.on('error', () => undefined);
    this.#rate = rate ?? kUnlimited;
  }

  async apply(): Promise<void> {
    await this.#queue.setGlobalRateLimit(this.#rate.max, this.#rate.durationMs);
  }

  /** Drops the connection; a Redis that is away is not waited for. */
  stop(): void {
    void this.#queue.disconnect().catch(() => undefined);
  }
}
