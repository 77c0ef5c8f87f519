import { cleanText } from '../text/clean-text.js';
import { describe } from '../executors/module.js';
import { scrubSecrets } from '../text/secret-scrubber.js';

/** How a listener went wrong: it threw, or the promise it returned rejected. */
export type ListenerFailure = 'threw' | 'failed';

/**
 * Calls each of one event's listeners on its own. A listener that throws, or returns a
 * promise that rejects, is told to `failed` and the others are called all the same: a
 * user's listener can neither keep an event from the run's own listeners (the report, the
 * checkpoints, the tally, the progress display) nor throw into the engine that emitted it.
 *
 * @param listeners as `rawListeners` gives them: a `once` wrapper removes itself when called
 */
export function emitToEach(
  listeners: readonly ((...args: never[]) => unknown)[],
  self: unknown,
  args: readonly unknown[],
  failed: (how: ListenerFailure, error: unknown) => void,
): void {
  for (const listener of listeners) {
    let returned: unknown;
    try {
      returned = Reflect.apply(listener, self, args);
    } catch (error) {
      failed('threw', error);
      continue;
    }
    // An async listener's rejection would otherwise be an unhandled rejection, which ends the process.
    if (isThenable(returned)) returned.then(undefined, (error: unknown) => failed('failed', error));
  }
}

/** One line about a listener that went wrong, safe to print: control characters and secrets removed. */
export function listenerFailureText(event: string, how: ListenerFailure, error: unknown): string {
  return `a listener of ${event} ${how}: ${scrubSecrets(cleanText(describe(error)))}`;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
