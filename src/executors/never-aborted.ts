/**
 * A signal that never aborts, for a call that takes one where nothing aborts that one call:
 * the worker's executors (the pool ends the thread instead) and the engine's submits (a
 * stopping run cancels every attempt at once). Its controller is dropped, so nothing can.
 */
export const kNeverAborted: AbortSignal = new AbortController().signal;
