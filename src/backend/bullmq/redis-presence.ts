import { Redis } from 'ioredis';

/** How often Redis is asked whether it answers. */
const kPingMs = 1000;
/** Pings without an answer after which a warning says Redis does not answer. */
const kWarnTicks = 3;
/**
 * Pings without an answer after which a close no longer waits for Redis. Not fewer: a
 * Redis busy with a big pipeline on a loaded machine can be silent for seconds.
 */
const kAwayTicks = 10;

export interface RedisPresenceOptions {
  /** After this many milliseconds without an answer, `lost` is called (once). */
  timeoutMs: number;
  /** Told once Redis has not answered for `timeoutMs`: the run stops (resumable). */
  lost: (awayMs: number) => void;
  /** Told when Redis stops answering and when it answers again. */
  warn: (message: string) => void;
}

/**
 * Watches whether Redis answers: a PING each second, one at a time, on a connection of its
 * own, so that it does not wait behind the coordinator's own backlog (100,000 adds queued
 * on the queue's connection are no Redis away). Silence is counted in ticks of this timer,
 * not in time since the last answer, so that the coordinator's own event loop, busy for a
 * while (100,000 tasks taken back), does not pass for a silent Redis: its answer waits
 * unread meanwhile. A Redis that is gone (connection refused, ioredis reconnecting) and one
 * that hangs (the socket open, no answer) both leave the ping unanswered. Commands sent
 * meanwhile wait in ioredis (no retry limit), so nothing fails while Redis is briefly away;
 * after `timeoutMs` the owner is told and stops the run.
 */
export class RedisPresence {
  readonly #redis: Redis;
  readonly #options: RedisPresenceOptions;
  readonly #timer: NodeJS.Timeout;
  /** Ticks since the ping on its way was sent. */
  #silentTicks = 0;
  #pinging = false;
  #lost = false;

  /** @param url Redis; the watch opens a connection of its own there (closed by dispose) */
  constructor(url: string, options: RedisPresenceOptions) {
    this.#redis = new Redis(url, { maxRetriesPerRequest: null });
    this.#redis.on('error', () => undefined);
    this.#options = options;
    this.#timer = setInterval(() => this.#tick(), kPingMs).unref();
  }

  /** Whether Redis answers (its connection is up and a ping did not go unanswered for long): a close waits for it only then. */
  get answering(): boolean {
    return this.#redis.status === 'ready' && this.#silentTicks < kAwayTicks;
  }

  dispose(): void {
    clearInterval(this.#timer);
    this.#redis.disconnect();
  }

  #tick(): void {
    if (this.#pinging) {
      this.#silentTicks++;
      if (this.#silentTicks === kWarnTicks) {
        this.#options.warn(
          `bullmq: Redis does not answer; no job can be added or finish until it is back (waiting up to ${this.#options.timeoutMs / 1000} s, --redis-timeout)`,
        );
      }
      if (!this.#lost && this.#silentTicks * kPingMs >= this.#options.timeoutMs) {
        this.#lost = true;
        this.#options.lost(this.#silentTicks * kPingMs);
      }
      return;
    }
    this.#pinging = true;
    this.#redis.ping().then(
      () => {
        if (this.#silentTicks >= kWarnTicks && !this.#lost) this.#options.warn('bullmq: Redis answers again; the run goes on');
        this.#pinging = false;
        this.#silentTicks = 0;
      },
      () => {
        this.#pinging = false;
      },
    );
  }
}
