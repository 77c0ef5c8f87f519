import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { WaveError } from '../../../errors.js';
import { ownerStateOf, ownIdentity, type OwnerState, type ProcessOwner } from '../../../process/process-identity.js';

/**
 * How long a coordinator's hold on its session id lasts unrenewed. It renews it with each
 * beat of its registration (every 2 s, session-registry.ts); one killed elsewhere frees the
 * id this long after its last beat, as workers forget its session after as long.
 */
export const kLeaseMs = 30_000;

/** The runs whose leases this process holds: a lease naming this pid and another run is a dead namesake's. */
const heldHere = new Set<string>();

/** A client for short commands that never waits long on a Redis that is away. */
function shortClient(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 5000, commandTimeout: 5000 });
  client.on('error', () => undefined);
  return client;
}

/**
 * Takes the lease for run ARGV[1] if no run holds it, or if the run holding it is ARGV[3]
 * (this run renewing, or one found dead): a hash of the holder's fields (ARGV[4…]) with the
 * time of this beat by Redis's clock, expiring ARGV[2] ms later. Returns
 * {1, now} when taken, {0, now, ms left, holder's fields} when another run holds it.
 * Redis's clock only: the machines' clocks may disagree by any amount.
 */
const kClaimScript = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local run = redis.call('HGET', KEYS[1], 'run')
if run and run ~= ARGV[1] and run ~= ARGV[3] then
  return {0, now, redis.call('PTTL', KEYS[1]), redis.call('HGETALL', KEYS[1])}
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'run', ARGV[1], 'beat', now, unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, now}
`;

/** Deletes the lease if run ARGV[1] holds it. */
const kReleaseScript = `
if redis.call('HGET', KEYS[1], 'run') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** The run that holds a lease, as its hash says. */
interface Holder extends ProcessOwner {
  run: string;
  /** The real path of its session folder. */
  folder: string;
  /** Its last beat, in ms of Redis's clock. */
  beat: number;
}

/** What a claim found: taken, or held by another run. */
type Claim = { taken: true } | { taken: false; holder: Holder; now: number; leftMs: number };

/**
 * One coordinator at a time per session id, across machines: a Redis hash per session id
 * (`csv-wave:lease:<id>`) naming the run that holds it (a random run id), its host, pid and
 * folder, taken when the run starts and renewed with each beat. The session lock
 * (`.csv-wave/lock`) keeps two runs out of one folder; this keeps two folders that share an
 * id (a copy whose id was forced, two machines' folders at one path) from running at once,
 * which would mix their jobs: the second is refused (SESSION_LOCKED, exit 3).
 *
 * A hold whose coordinator was killed lapses kLeaseMs after its last beat. On the same
 * machine it is taken over at once when its pid is seen dead (the lock's rule: boot, pid
 * namespace and start time), so that a `resume` right after a kill -9 does not wait.
 */
export class SessionLease {
  readonly #client: Redis;
  readonly #key: string;
  readonly #runId: string;
  readonly #fields: string[];
  readonly #superseded: (reason: string) => void;
  #lost = false;

  private constructor(client: Redis, sessionId: string, runId: string, folder: string, superseded: (reason: string) => void) {
    this.#client = client;
    this.#key = `csv-wave:lease:${sessionId}`;
    this.#runId = runId;
    const { bootId, pidNamespace, startTicks } = ownIdentity();
    this.#fields = ['hostname', hostname(), 'pid', String(process.pid), 'folder', folder];
    if (bootId !== undefined) this.#fields.push('bootId', bootId);
    if (pidNamespace !== undefined) this.#fields.push('pidNamespace', pidNamespace);
    if (startTicks !== undefined) this.#fields.push('startTicks', String(startTicks));
    this.#superseded = superseded;
  }

  /**
   * Holds the session id for run `runId`, or throws SESSION_LOCKED naming the run that
   * holds it (host, pid, folder, when it last beat). Redis must answer (checked before).
   *
   * @param folder the session folder's real path, shown to a run refused
   * @param superseded told once if a later beat finds another run holding the id (this one
   *   did not beat for kLeaseMs: it was stopped, or cut off from Redis): the run must stop
   */
  static async take(url: string, sessionId: string, runId: string, folder: string, superseded: (reason: string) => void): Promise<SessionLease> {
    const lease = new SessionLease(shortClient(url), sessionId, runId, folder, superseded);
    try {
      let claim = await lease.#claim('');
      // A holder seen dead on this machine is replaced, if it still holds the lease (of two runs doing so, one wins).
      if (!claim.taken && stateOf(claim.holder) === 'gone') claim = await lease.#claim(claim.holder.run);
      if (!claim.taken) throw heldError(sessionId, folder, claim);
    } catch (error) {
      lease.#client.disconnect();
      throw error;
    }
    heldHere.add(runId);
    return lease;
  }

  /**
   * Throws SESSION_LOCKED as take() would, without taking anything: a run asks before it
   * writes its session folder, so that a run refused leaves the folder as it was. take()
   * still decides; this only answers early.
   */
  static async check(url: string, sessionId: string, folder: string): Promise<void> {
    const client = shortClient(url);
    try {
      const key = `csv-wave:lease:${sessionId}`;
      const [time, fields, leftMs] = await Promise.all([client.time(), client.hgetall(key), client.pttl(key)]);
      const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
      if (fields['run'] === undefined) return;
      const holder = holderOf(Object.entries(fields).flat());
      if (stateOf(holder) === 'gone') return;
      throw heldError(sessionId, folder, { taken: false, holder, now, leftMs: Math.max(0, leftMs) });
    } finally {
      client.disconnect();
    }
  }

  /** Renews the hold (each beat); a hold another run took meanwhile is told to `superseded`, once. */
  async renew(): Promise<void> {
    if (this.#lost) return;
    const claim = await this.#claim(this.#runId);
    if (claim.taken) return;
    this.#lost = true;
    const { holder } = claim;
    this.#superseded(
      `another run took over this session's id (on ${holder.hostname}, pid ${holder.pid}, folder ${holder.folder}): ` +
        `this run had not renewed its hold for ${kLeaseMs / 1000} s (it was stopped, or cut off from Redis), and two runs on one id would mix their jobs`,
    );
  }

  /** Lets the id go (the run is over). With `answering` false (Redis is away) it lapses by itself. */
  async release(answering: boolean): Promise<void> {
    heldHere.delete(this.#runId);
    if (answering && !this.#lost) await this.#client.eval(kReleaseScript, 1, this.#key, this.#runId).catch(() => undefined);
    this.#client.disconnect();
  }

  async #claim(replacing: string): Promise<Claim> {
    const answer = (await this.#client.eval(kClaimScript, 1, this.#key, this.#runId, String(kLeaseMs), replacing, ...this.#fields)) as [
      number,
      number,
      number?,
      string[]?,
    ];
    const [taken, now, leftMs = 0, fields = []] = answer;
    if (taken === 1) return { taken: true };
    return { taken: false, holder: holderOf(fields), now, leftMs: Math.max(0, leftMs) };
  }
}

/** Whether the holder may still run: the lock's rule (ownerStateOf), this process knowing its own runs. */
function stateOf(holder: Holder): OwnerState {
  return ownerStateOf(holder, () => heldHere.has(holder.run));
}

/** The holder's hash (HGETALL's field, value list) read back; missing fields read as unknown. */
function holderOf(fields: readonly string[]): Holder {
  const map = new Map<string, string>();
  for (let index = 0; index + 1 < fields.length; index += 2) map.set(fields[index]!, fields[index + 1]!);
  const number = (name: string) => {
    const value = Number(map.get(name));
    return Number.isSafeInteger(value) ? value : undefined;
  };
  const holder: Holder = {
    run: map.get('run') ?? '',
    hostname: map.get('hostname') ?? '?',
    pid: number('pid') ?? -1,
    folder: map.get('folder') ?? '?',
    beat: number('beat') ?? 0,
  };
  const bootId = map.get('bootId');
  if (bootId !== undefined) holder.bootId = bootId;
  const pidNamespace = map.get('pidNamespace');
  if (pidNamespace !== undefined) holder.pidNamespace = pidNamespace;
  const startTicks = number('startTicks');
  if (startTicks !== undefined) holder.startTicks = startTicks;
  return holder;
}

function heldError(sessionId: string, folder: string, claim: Extract<Claim, { taken: false }>): WaveError {
  const { holder, now, leftMs } = claim;
  const where: Record<Exclude<OwnerState, 'gone'>, string> = {
    running: `on ${holder.hostname} (this machine)`,
    'other-host': `on ${holder.hostname}`,
    'other-namespace': `on ${holder.hostname}, in another pid namespace (${holder.pidNamespace ?? '?'})`,
  };
  const state = stateOf(holder);
  const ago = Math.max(0, Math.round((now - holder.beat) / 1000));
  const copy = holder.folder === folder ? '' : ` If ${holder.folder} is a copy of this folder, give this one an id of its own: remove its .csv-wave/session-id.`;
  return new WaveError(
    'SESSION_LOCKED',
    `Session id ${sessionId} is locked by another run ${state === 'gone' ? where.running : where[state]} ` +
      `(pid ${holder.pid}, folder ${holder.folder}), which last beat ${ago} s ago: two coordinators on one session id would take each other's jobs. ` +
      `Wait for it to end, or stop it; if it was killed, its hold lapses ${kLeaseMs / 1000} s after its last beat (in about ${Math.ceil(leftMs / 1000)} s).${copy}`,
  );
}
