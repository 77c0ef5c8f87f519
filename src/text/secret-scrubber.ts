/**
 * Keeps secrets given through the environment out of everything csv-wave writes. The
 * values of environment variables whose names look secret (`KEY`, `TOKEN`, `SECRET`,
 * `PASSWORD`, `PASSWD`, `CREDENTIAL`, `AUTH`, any case) and that are at least 8 characters
 * long are replaced by `***` in every text a task produces, before it is written anywhere:
 * tasks.csv, the journal, discoveries, artifacts, wisdom, logs and error messages; also
 * where control characters or ANSI escapes split them (see `SecretScrubber.text`).
 *
 * Worker threads and the main thread see the same environment (piscina workers inherit
 * `process.env` when they start), so the values are read where the text is.
 */
import { isMainThread } from 'node:worker_threads';
import { cleanText } from './clean-text.js';

/** Names of environment variables whose values are secrets. */
export const kSecretNamePattern = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;
/** Shorter values (`AUTH=1`, `KEYBOARD=us`) are too common in ordinary text to hide. */
export const kMinSecretLength = 8;
/** What a secret is replaced with. */
export const kRedacted = '***';

/** The secret values of `env`, longest first (a secret that contains another goes first). */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= kMinSecretLength && kSecretNamePattern.test(name)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

let threadScrubber: SecretScrubber | undefined;

export class SecretScrubber {
  readonly #values: readonly string[];

  /**
   * A scrubber for the secrets of the environment. A worker thread's environment is fixed
   * when the thread starts, so there it is read once; the main thread reads it each time
   * (a library user may change it between runs).
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): SecretScrubber {
    if (env !== process.env || isMainThread) return new SecretScrubber(secretValues(env));
    threadScrubber ??= new SecretScrubber(secretValues(env));
    return threadScrubber;
  }

  constructor(values: readonly string[]) {
    this.#values = values;
  }

  /**
   * `text` with every secret replaced by `***`. A secret split by a control character or an
   * ANSI escape (`sk-live-AB` + `\x01` + `CD`) is whole again once they are removed, by
   * cleanText or by the terminal that shows the text: so the text is cleaned first, then
   * scrubbed, whenever that finds a secret. Text without such a hidden secret keeps its
   * control characters (an artifact is written as the task produced it).
   */
  text(text: string): string {
    if (this.#values.length === 0) return text;
    const scrubbed = this.#replace(text);
    const cleaned = cleanText(scrubbed);
    if (cleaned === scrubbed) return scrubbed;
    const cleanedScrubbed = this.#replace(cleaned);
    return cleanedScrubbed === cleaned ? scrubbed : cleanedScrubbed;
  }

  #replace(text: string): string {
    let out = text;
    for (const value of this.#values) if (out.includes(value)) out = out.split(value).join(kRedacted);
    return out;
  }

  /**
   * A JSON value (parsed output, a result) with every string scrubbed, object keys
   * included. Iterative, so that a deeply nested value cannot overflow the stack.
   */
  deep<T>(value: T): T {
    if (this.#values.length === 0) return value;
    return mapStrings(value, (text) => this.text(text));
  }
}

/** `text` with the secrets of the current environment replaced by `***`. */
export function scrubSecrets(text: string): string {
  return SecretScrubber.fromEnv().text(text);
}

/**
 * A copy of a JSON value (plain objects, arrays, strings, numbers, booleans, null) with
 * `map` applied to every string and object key. Walks with an explicit stack. Not for
 * values with cycles: pass a value that went through JSON first.
 */
export function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const root: unknown = Array.isArray(value) ? [] : {};
  const stack: { from: object; to: Record<string, unknown> | unknown[] }[] = [{ from: value, to: root as Record<string, unknown> }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { from, to } = item;
    const entries = Array.isArray(from) ? from.map((child, index) => [index, child] as const) : Object.entries(from);
    for (const [key, child] of entries) {
      let copy: unknown = child;
      if (typeof child === 'string') copy = map(child);
      else if (child !== null && typeof child === 'object') {
        copy = Array.isArray(child) ? [] : {};
        stack.push({ from: child, to: copy as Record<string, unknown> });
      }
      if (Array.isArray(to)) to[key as number] = copy;
      // defineProperty: a `__proto__` key (JSON.parse makes it an own property) stays a key.
      else Object.defineProperty(to, map(String(key)), { value: copy, enumerable: true, writable: true, configurable: true });
    }
  }
  return root as T;
}
