/**
 * Node's timers hold at most 2^31 - 1 ms (about 24.8 days). A longer delay does not wait
 * longer: it fires after 1 ms with a TimeoutOverflowWarning, so a 30-day `--timeout` would
 * time every task out at once. Every delay csv-wave hands to a timer stays below this.
 */
export const kMaxTimerMs = 2 ** 31 - 1;

/**
 * The longest timeout or grace period csv-wave accepts, in seconds: 24 days, a round
 * figure under the timers' ceiling that leaves room for the few seconds a module's
 * timeout gets before its thread is ended.
 */
export const kMaxTimerSeconds = 24 * 24 * 60 * 60;
