/**
 * Where a run's attempts run (`--backend`).
 * - `local`: this machine's worker threads and processes (backend/local/).
 * - `bullmq`: BullMQ jobs on the Redis at `url`, run by `csv-wave worker` processes on any machine (backend/bullmq/).
 */
export type BackendChoice = { type: 'local' } | { type: 'bullmq'; url: string };
