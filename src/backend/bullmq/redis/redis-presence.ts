import { Redis } from 'ioredis';
import type { WriteRefusal } from './write-refusal.js';

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
  /** After this many milliseconds without an answer, or of refused writes, `lost` is called (once). */
  timeoutMs: number;
  /** Told once, with why, when Redis has not answered, or has refused every write, for `timeoutMs`: the run stops (resumable). */
  lost: (reason: string) => void;
  /** Told when Redis stops answering or taking writes, and when it does again. */
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
 *
 * A Redis that answers may still refuse writes (full at maxmemory with noeviction, a failed
 * save, a replica: write-refusal.ts). A PING does not tell: the owner's writes do, with
 * `refused` and `accepted`. Refusals are counted in the same ticks from the first one, and
 * after `timeoutMs` of them with no write taken the owner is told the same way.
 */
export class RedisPresence {
  readonly #redis: Redis;
  readonly #options: RedisPresenceOptions;
  readonly #timer: NodeJS.Timeout;
  /** Ticks since the ping on its way was sent. */
  #silentTicks = 0;
  #pinging = false;
  #lost = false;
  /** Ticks since the first write refused after the last one taken; undefined while writes are taken. */
  #refusedTicks: number | undefined;
  /** Redis's words for the last refusal. */
  #refusal = '';

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

  /**
   * A write was refused for Redis's state: said at once, with what to do, the first time
   * since writes were last taken; counted toward `timeoutMs` from then.
   */
  refused({ words, remedy }: WriteRefusal): void {
    this.#refusal = words;
    if (this.#refusedTicks !== undefined) return;
    this.#refusedTicks = 0;
    this.#options.warn(
      `bullmq: Redis refuses writes (${words}): no job can be added until it takes them again; ${remedy} (waiting up to ${this.#options.timeoutMs / 1000} s, --redis-timeout)`,
    );
  }

  /** A write went through: the refusals, if any, are over. */
  accepted(): void {
    if (this.#refusedTicks === undefined) return;
    this.#refusedTicks = undefined;
    if (!this.#lost) this.#options.warn('bullmq: Redis takes writes again; the run goes on');
  }

  dispose(): void {
    clearInterval(this.#timer);
    this.#redis.disconnect();
  }

  #tick(): void {
    if (this.#refusedTicks !== undefined) {
      this.#refusedTicks++;
      if (!this.#lost && this.#refusedTicks * kPingMs >= this.#options.timeoutMs) {
        this.#lost = true;
        this.#options.lost(`Redis refused writes for ${this.#options.timeoutMs / 1000} s (--redis-timeout): ${this.#refusal}`);
      }
    }
    if (this.#pinging) {
      this.#silentTicks++;
      if (this.#silentTicks === kWarnTicks) {
        this.#options.warn(
          `bullmq: Redis does not answer; no job can be added or finish until it is back (waiting up to ${this.#options.timeoutMs / 1000} s, --redis-timeout)`,
        );
      }
      if (!this.#lost && this.#silentTicks * kPingMs >= this.#options.timeoutMs) {
        this.#lost = true;
        this.#options.lost(`Redis did not answer for ${this.#options.timeoutMs / 1000} s (--redis-timeout)`);
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
