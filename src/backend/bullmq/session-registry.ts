import { Redis } from 'ioredis';

/**
 * The sessions whose coordinators run now, for `csv-wave worker` without `--session-id`:
 * a Redis sorted set of session ids scored by the time of their coordinator's last beat.
 * A coordinator beats every kBeatMs and leaves the set when it closes; one killed with
 * kill -9 stops beating, and workers let its session go after kForgetMs (a `resume`
 * beats again). The set is refreshed by every beat, so a Redis restarted without its data
 * has it back within a beat.
 */
const kSessionsKey = 'csv-wave:sessions';

/** How often a coordinator says its session is running. */
const kBeatMs = 2000;

/** How long after its last beat a session is still served. */
export const kForgetMs = 30_000;

/** A client for short commands that never waits long on a Redis that is away. */
function shortClient(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000, commandTimeout: 5000 });
  client.on('error', () => undefined);
  return client;
}

/** The coordinator's side: beats while the run lasts. */
export class SessionRegistration {
  readonly #client: Redis;
  readonly #sessionId: string;
  readonly #timer: NodeJS.Timeout;
  /** What else each beat renews (the queue's rate limit). */
  readonly #renew: () => Promise<void>;

  private constructor(client: Redis, sessionId: string, renew: () => Promise<void>) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#renew = renew;
    this.#timer = setInterval(() => void this.#beat().catch(() => undefined), kBeatMs).unref();
  }

  static async start(url: string, sessionId: string, renew: () => Promise<void>): Promise<SessionRegistration> {
    const registration = new SessionRegistration(shortClient(url), sessionId, renew);
    await registration.#beat();
    return registration;
  }

  async #beat(): Promise<void> {
    await this.#renew();
    await this.#client.zadd(kSessionsKey, Date.now(), this.#sessionId);
  }

  /**
   * Leaves the set (the run is over). With `answering` false (Redis is away) the removal is
   * not tried: workers forget the session kForgetMs after its last beat.
   */
  async stop(answering: boolean): Promise<void> {
    clearInterval(this.#timer);
    if (answering) await this.#client.zrem(kSessionsKey, this.#sessionId).catch(() => undefined);
    this.#client.disconnect();
  }
}

/** The worker's side: the sessions beating within kForgetMs. */
export class SessionDirectory {
  readonly #client: Redis;

  constructor(url: string) {
    this.#client = shortClient(url);
  }

  async running(): Promise<string[]> {
    return this.#client.zrangebyscore(kSessionsKey, Date.now() - kForgetMs, '+inf');
  }

  stop(): void {
    this.#client.disconnect();
  }
}
