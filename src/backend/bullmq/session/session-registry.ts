import { Redis } from 'ioredis';
import { kFlagDefaults } from '../../../option-table.js';
import { kSessionIdPattern } from '../jobs/names.js';
import { sessionSigned, type Signing } from '../trust/signing.js';

/**
 * The sessions whose coordinators run now, for `csv-wave worker` without `--session-id`:
 * a Redis sorted set of session ids scored by the time of their coordinator's last beat,
 * and beside it a hash of each beat's signature. A coordinator beats every kBeatMs and
 * leaves the set when it closes; one killed with kill -9 stops beating, and workers let its
 * session go after kForgetMs (a `resume` beats again). The set is refreshed by every beat,
 * so a Redis restarted without its data has it back within a beat.
 *
 * Times are Redis's own (TIME), never a machine's: a worker or a coordinator whose clock is
 * off still agrees with the others on which sessions beat. Anyone who can write to the Redis
 * can add members: a worker serves only ids that are session ids, whose beat is signed with
 * its secret over the id and the beat's time (so an old beat cannot be replayed as a fresh
 * one), at most `--max-sessions` of them, the most recently beaten first; stale members are
 * pruned at every beat and every read.
 *
 * A member missing from the set is not proof that its coordinator ended: a Redis restarted
 * without its data, or emptied, lost the whole set, and the coordinators still running put
 * their sessions back at their next beat. So a coordinator that ends leaves a mark that it
 * left (kLeftPrefix, for kForgetMs), and a worker lets a missing session go at once only
 * when it finds that mark; else it serves it on until kForgetMs after the last beat it saw.
 */
const kSessionsKey = 'csv-wave:sessions';
/** Each member's beat signature (signing.ts `sessionSigned`), by session id; none from an `--insecure-no-secret` coordinator. */
const kSignaturesKey = 'csv-wave:sessions:sig';
/** `<prefix><session id>`: set by a coordinator that ended, for kForgetMs; removed by the session's next beat. */
const kLeftPrefix = 'csv-wave:sessions:left:';

/** How often a coordinator says its session is running. */
const kBeatMs = 2000;

/** How long after its last beat a session is still served. */
export const kForgetMs = 30_000;

/** Sessions a worker serves at once at most (`--max-sessions`). */
export const kDefaultMaxSessions = kFlagDefaults.maxSessions;

/**
 * Members a worker reads at most per look, the most recently beaten first: a registry
 * stuffed with fresh fake members costs a worker no more than this per second.
 */
const kReadLimit = 1000;
/** Stale members pruned at most per beat or read. */
const kPruneLimit = 1000;

/** Lua: Redis's clock in ms, and the pruning of members older than `before` (at most kPruneLimit, with their signatures). */
const kLuaHelpers = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function prune(before)
  local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. before, 'LIMIT', 0, ${kPruneLimit})
  for _, member in ipairs(stale) do
    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', KEYS[2], member)
  end
end`;

/**
 * A beat: ARGV = member, its time (Redis's, read just before: it is signed), signature or '',
 * forget ms; KEYS[3] its left mark, which a running session has not. ZADD first: it is what
 * a full Redis refuses (a script's first write decides), so a full Redis takes no beat.
 */
const kBeatScript = `${kLuaHelpers}
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], ARGV[1]) else redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
redis.call('DEL', KEYS[3])
prune(now - tonumber(ARGV[4]))
return 1`;

/** A worker's read: ARGV = forget ms, limit. Returns Redis's now, then member, score, signature ('' if none), … the most recent first. */
const kLiveScript = `${kLuaHelpers}
local since = now - tonumber(ARGV[1])
prune(since)
local live = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', since, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {tostring(now)}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], live[i]) or ''
end
return out`;

interface RegistryClient extends Redis {
  csvWaveBeat(sessions: string, signatures: string, left: string, member: string, at: number, sig: string, forgetMs: number): Promise<number>;
  csvWaveLive(sessions: string, signatures: string, forgetMs: number, limit: number): Promise<string[]>;
}

/** A client for short commands that never waits long on a Redis that is away, with the registry's scripts. */
function shortClient(url: string): RegistryClient {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000, commandTimeout: 5000 });
  client.on('error', () => undefined);
  client.defineCommand('csvWaveBeat', { numberOfKeys: 3, lua: kBeatScript });
  client.defineCommand('csvWaveLive', { numberOfKeys: 2, lua: kLiveScript });
  return client as RegistryClient;
}

/** Redis's clock in ms (TIME: seconds and microseconds). */
async function redisNow(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** The coordinator's side: beats while the run lasts. */
export class SessionRegistration {
  readonly #client: RegistryClient;
  readonly #sessionId: string;
  readonly #signing: Signing;
  readonly #timer: NodeJS.Timeout;
  /** What else each beat renews (the queue's rate limit). */
  readonly #renew: () => Promise<void>;
  /** The beats on their way (each settles, never rejects; its commands time out after 5 s). */
  readonly #beating = new Set<Promise<void>>();
  #stopped = false;

  private constructor(client: RegistryClient, sessionId: string, signing: Signing, renew: () => Promise<void>, beaten: (error?: unknown) => void) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#signing = signing;
    this.#renew = renew;
    this.#timer = setInterval(() => {
      if (this.#stopped) return;
      const beat = this.#beat().then(() => beaten(), beaten).catch(() => undefined);
      this.#beating.add(beat);
      void beat.finally(() => this.#beating.delete(beat));
    }, kBeatMs).unref();
  }

  /**
   * Beats once (and throws what that beat met), then every kBeatMs.
   *
   * @param beaten told the end of each later beat: nothing, or the error it failed with
   *   (Redis away, or refusing writes: a full Redis takes no beat)
   */
  static async start(
    url: string,
    sessionId: string,
    signing: Signing,
    renew: () => Promise<void>,
    beaten: (error?: unknown) => void = () => undefined,
  ): Promise<SessionRegistration> {
    const registration = new SessionRegistration(shortClient(url), sessionId, signing, renew, beaten);
    try {
      await registration.#beat();
    } catch (error) {
      // Its connection would keep the process alive after the run was refused.
      clearInterval(registration.#timer);
      registration.#client.disconnect();
      throw error;
    }
    return registration;
  }

  async #beat(): Promise<void> {
    await this.#renew();
    // Two round trips: the beat's time is signed, so it is read before the beat is written.
    const at = await redisNow(this.#client);
    const sig = this.#signing.sign(sessionSigned(this.#sessionId, at)) ?? '';
    await this.#client.csvWaveBeat(kSessionsKey, kSignaturesKey, `${kLeftPrefix}${this.#sessionId}`, this.#sessionId, at, sig, kForgetMs);
  }

  /**
   * Leaves the set (the run is over), with the mark that says so: workers let the session go
   * at once. With `answering` false (Redis is away) nothing is tried: workers forget the
   * session kForgetMs after its last beat.
   */
  async stop(answering: boolean): Promise<void> {
    clearInterval(this.#timer);
    this.#stopped = true;
    if (answering) {
      // A beat on its way lands first: landing after the removal, its script would put the
      // session back into the set and delete the mark (seen on a loaded machine: a finished
      // session still served by the workers for 30 s).
      await Promise.all(this.#beating);
      await this.#client
        .multi()
        .zrem(kSessionsKey, this.#sessionId)
        .hdel(kSignaturesKey, this.#sessionId)
        .set(`${kLeftPrefix}${this.#sessionId}`, '1', 'PX', kForgetMs)
        .exec()
        .catch(() => undefined);
    }
    this.#client.disconnect();
  }
}

/** What a worker finds in the registry. */
export interface RunningSessions {
  /** Redis's clock at the read, in ms. */
  now: number;
  /** The sessions to serve, the most recently beaten first: at most `limit`. */
  served: string[];
  /** The last beat of each session served, in ms of Redis's clock. */
  beats: Map<string, number>;
  /** Running sessions beyond the limit, the least recently beaten: not served. */
  beyondLimit: string[];
  /** Members beating within kForgetMs that are not signed session ids: ignored. */
  unsigned: number;
  limit: number;
}

/** The worker's side: the sessions beating within kForgetMs, signed with its secret. */
export class SessionDirectory {
  readonly #client: RegistryClient;
  readonly #signing: Signing;
  readonly #limit: number;

  constructor(url: string, signing: Signing, limit: number) {
    this.#client = shortClient(url);
    this.#signing = signing;
    this.#limit = limit;
  }

  async running(): Promise<RunningSessions> {
    const [now = '', ...flat] = await this.#client.csvWaveLive(kSessionsKey, kSignaturesKey, kForgetMs, kReadLimit);
    const running: RunningSessions = { now: Number(now), served: [], beats: new Map(), beyondLimit: [], unsigned: 0, limit: this.#limit };
    for (let index = 0; index + 3 <= flat.length; index += 3) {
      const [member = '', score = '', sig = ''] = flat.slice(index, index + 3);
      const at = Number(score);
      const signed =
        kSessionIdPattern.test(member) && Number.isSafeInteger(at) && this.#signing.refusal(sessionSigned(member, at), sig === '' ? undefined : sig) === undefined;
      if (!signed) {
        running.unsigned++;
      } else if (running.served.length < this.#limit) {
        running.served.push(member);
        running.beats.set(member, at);
      } else {
        running.beyondLimit.push(member);
      }
    }
    return running;
  }

  /** Which of these sessions' coordinators left the registry on their own (the mark of SessionRegistration.stop). */
  async left(sessionIds: readonly string[]): Promise<Set<string>> {
    const pipeline = this.#client.pipeline();
    for (const id of sessionIds) pipeline.exists(`${kLeftPrefix}${id}`);
    const answers = (await pipeline.exec()) ?? [];
    return new Set(sessionIds.filter((_, index) => answers[index]?.[1] === 1));
  }

  stop(): void {
    this.#client.disconnect();
  }
}
