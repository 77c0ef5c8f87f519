import { WaveError } from '../../../errors.js';
import { cleanText } from '../../../text/clean-text.js';
import { maskRedisUrl } from './redis-url.js';

/**
 * Redis's answers that refuse a write for the state Redis is in, not for the write itself,
 * by their first word, with what makes Redis take writes again. The same write goes through
 * once it does. A refusal inside a Lua script (BullMQ's adds are scripts) comes back with
 * the same first word.
 */
const kRemedies: Record<string, string> = {
  // Full: maxmemory reached under the noeviction policy (a job queue's own; BullMQ asks for it).
  OOM: 'free memory in Redis or raise its maxmemory',
  // Its last save to disk failed, and stop-writes-on-bgsave-error is on.
  MISCONF: 'let Redis save to its disk again',
  // It is a replica now (a failover).
  READONLY: 'point --redis at the primary',
};

/** The longest part of Redis's words a message shows. */
const kShownChars = 200;

/** A write Redis refused for its state: its own words and what to do. */
export interface WriteRefusal {
  /** Redis's answer, its first line, cleaned and cut (it goes to the terminal). */
  words: string;
  remedy: string;
}

/** What `error` says when it is a write refused for Redis's state (see kRemedies); undefined for any other error (the write's own, a lost connection). */
export function writeRefusal(error: unknown): WriteRefusal | undefined {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  const remedy = kRemedies[message.slice(0, message.indexOf(' '))];
  if (remedy === undefined) return undefined;
  // A script's refusal ends by naming the script (`script: <sha>, on @user_script:589.`): nothing for a person.
  const line = cleanText((message.split('\n', 1)[0] ?? '').replace(/ script: [0-9a-f]+, on @user_script:\d+\.$/, '').replace(/\.$/, ''));
  return { words: line.length > kShownChars ? `${line.slice(0, kShownChars)}…` : line, remedy };
}

/**
 * What a coordinator that met `error` while it started throws: a write Redis refused for its
 * state becomes a WaveError REDIS_REFUSES_WRITES (exit 2, as a Redis that does not answer),
 * saying Redis's words and what to do; any other error is thrown as it is.
 */
export function refusedAtStart(error: unknown, url: string): unknown {
  const refusal = writeRefusal(error);
  if (refusal === undefined) return error;
  return new WaveError(
    'REDIS_REFUSES_WRITES',
    `Redis at ${maskRedisUrl(url)} refuses writes (${refusal.words}): ${refusal.remedy}, then run again. No task was started.`,
    { cause: error },
  );
}
