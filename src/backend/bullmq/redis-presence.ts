import type { Redis } from 'ioredis';

/** How often Redis is asked whether it answers. */
const kPingMs = 1000;
/** Redis that has not answered for this long is away (a close does not wait for it). */
const kAwayMs = 3000;

export interface RedisPresenceOptions {
  /** After this many milliseconds without an answer, `lost` is called (once). */
  timeoutMs: number;
  /** Told once Redis has not answered for `timeoutMs`: the run stops (resumable). */
  lost: (awayMs: number) => void;
  /** Told when Redis stops answering and when it answers again. */
  warn: (message: string) => void;
}

/**
 * Watches whether Redis answers: a PING each second, one at a time. A Redis that is gone
 * (connection refused, ioredis reconnecting) and one that hangs (the socket open, no
 * answer) look the same here: no answer since some time. Commands sent meanwhile wait in
 * ioredis (no retry limit), so nothing fails while Redis is briefly away; after
 * `timeoutMs` the owner is told and stops the run.
 */
export class RedisPresence {
  readonly #redis: Redis;
  readonly #options: RedisPresenceOptions;
  readonly #timer: NodeJS.Timeout;
  #lastAnswer = performance.now();
  #pinging = false;
  #away = false;
  #lost = false;

  constructor(redis: Redis, options: RedisPresenceOptions) {
    this.#redis = redis;
    this.#options = options;
    this.#timer = setInterval(() => this.#tick(), kPingMs).unref();
  }

  /** Whether Redis answered lately: when it did not, a close does not wait for it. */
  get answering(): boolean {
    return performance.now() - this.#lastAnswer < kAwayMs;
  }

  /** Whether the time without an answer ran out (`lost` was told). */
  get lost(): boolean {
    return this.#lost;
  }

  dispose(): void {
    clearInterval(this.#timer);
  }

  #tick(): void {
    const silentMs = performance.now() - this.#lastAnswer;
    if (!this.#away && silentMs >= kAwayMs) {
      this.#away = true;
      this.#options.warn(`bullmq: Redis does not answer; no job can be added or finish until it is back (waiting up to ${Math.round(this.#options.timeoutMs / 1000)} s, --redis-timeout)`);
    }
    if (!this.#lost && silentMs >= this.#options.timeoutMs) {
      this.#lost = true;
      this.#options.lost(silentMs);
    }
    if (this.#pinging) return;
    this.#pinging = true;
    this.#redis.ping().then(
      () => {
        this.#pinging = false;
        this.#lastAnswer = performance.now();
        if (this.#away && !this.#lost) this.#options.warn('bullmq: Redis answers again; the run goes on');
        this.#away = false;
      },
      () => {
        this.#pinging = false;
      },
    );
  }
}
