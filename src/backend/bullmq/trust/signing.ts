import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SecretScrubber } from '../../../text/secret-scrubber.js';

/**
 * What coordinators and workers sign, with a secret they share that never goes through
 * Redis: anyone who can write to the Redis can add, change or complete jobs, so a worker
 * runs only jobs signed with the secret, and a coordinator merges only replies signed with
 * it (README "Running on many machines", threat model). HMAC-SHA256 over canonical JSON.
 */

/** The version of the signed fields: a change of them gets a new one, so no old signature verifies by chance. */
export const kSignatureVersion = 1;

/**
 * JSON text with the keys of every object sorted, and otherwise as JSON.stringify writes
 * it (toJSON called, undefined members left out, undefined in arrays as null): a value and
 * its JSON round trip through Redis give the same text, whatever order their keys came in.
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const text = write((value as Record<string, unknown>)[key]);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/** SHA-256 of the text's UTF-8 bytes, in hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The digest of an attempt's request, carried in its job and in its reply: the coordinator
 * compares the reply's with the one of the request it submitted. Throws on a value
 * JSON cannot hold or nested too deep to walk (a worker refuses such a job).
 */
export function requestDigest(request: unknown): string {
  return sha256Hex(canonicalJson(request));
}

/** A digest as the coordinator keeps it per awaited attempt: its 32 bytes as a one-byte string (48 bytes of heap, not 80). */
export function compactDigest(hex: string): string {
  return Buffer.from(hex, 'hex').toString('latin1');
}

/** A job's signature covers its queue, its id and its request's digest: it cannot be moved to another job or queue. */
export function jobSigned(queue: string, jobId: string, digest: string): object {
  return { v: kSignatureVersion, kind: 'job', queue, jobId, digest };
}

/**
 * A reply's signature covers its job, the digest of the request the worker ran, the reply
 * text's SHA-256 and, from a worker that tells it (a reply envelope of version 2), where and
 * how long it ran (`ran`). Without `ran` the fields are those an older worker signs, so its
 * replies still verify; and neither kind of signature verifies for the other (one holds `ran`).
 */
export function replySigned(queue: string, jobId: string, digest: string, reply: string, ran?: object): object {
  return { v: kSignatureVersion, kind: 'reply', queue, jobId, digest, reply: sha256Hex(reply), ...(ran === undefined ? {} : { ran }) };
}

/** A coordinator's beat in the session registry covers the session and the beat's time (Redis's clock, ms). */
export function sessionSigned(sessionId: string, at: number): object {
  return { v: kSignatureVersion, kind: 'session', sessionId, at };
}

/** The shortest secret accepted: `openssl rand -hex 32` gives 64 characters, 32 is 128 bits of hex. */
export const kMinSecretLength = 32;

const kSignaturePattern = /^[0-9a-f]{64}$/;

/**
 * How a coordinator or a worker signs and checks: with the shared secret, or not at all
 * (`--insecure-no-secret`, which the user chose explicitly).
 */
export class Signing {
  readonly #key: Buffer | undefined;

  private constructor(key: Buffer | undefined) {
    this.#key = key;
  }

  /** Signing with the secret (its text, checked long enough by secret-source.ts). */
  static withSecret(secret: string): Signing {
    if (secret.length < kMinSecretLength) throw new Error(`A secret has at least ${kMinSecretLength} characters`);
    return new Signing(Buffer.from(secret, 'utf8'));
  }

  /** No signing: jobs and replies go unsigned, and are taken unsigned. */
  static insecure(): Signing {
    return new Signing(undefined);
  }

  get insecure(): boolean {
    return this.#key === undefined;
  }

  /**
   * A scrubber of the secret itself, for a worker's replies: a task that read the worker's
   * secret file (an agent's read-only sandbox reads the whole disk) must not hand it to
   * whoever reads Redis, who could then sign jobs of their own.
   */
  scrubber(): SecretScrubber {
    return new SecretScrubber(this.#key === undefined ? [] : [this.#key.toString('utf8')]);
  }

  /** The signature of these fields (hex); undefined without a secret. */
  sign(fields: object): string | undefined {
    return this.#key === undefined ? undefined : hmac(this.#key, fields).toString('hex');
  }

  /**
   * Why `sig` is not the signature of these fields, or undefined when it is. Without a
   * secret every signature is taken, present or not (nothing to check it with).
   */
  refusal(fields: object, sig: unknown): string | undefined {
    if (this.#key === undefined) return undefined;
    if (sig === undefined || sig === null || sig === '') return 'it is not signed (a worker or coordinator without the secret, or someone writing to Redis)';
    const expected = hmac(this.#key, fields);
    // Constant time: a forger learns nothing from how long the comparison took.
    if (typeof sig !== 'string' || !kSignaturePattern.test(sig) || !timingSafeEqual(Buffer.from(sig, 'hex'), expected)) {
      return 'its signature does not verify (signed with another secret, or forged)';
    }
    return undefined;
  }
}

function hmac(key: Buffer, fields: object): Buffer {
  return createHmac('sha256', key).update(canonicalJson(fields), 'utf8').digest();
}
