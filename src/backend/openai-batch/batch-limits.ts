/** OpenAI's limits on one batch: 50,000 requests, an input file of 200 MB (csv-wave keeps a margin). */
export const kMaxBatchRequests = 50_000;
export const kMaxBatchBytes = 190 * 1024 * 1024;

/** Where a repair request goes in batch mode: into the next batch, or at once as a synchronous call. */
export const kBatchRepairModes = ['batch', 'sync'] as const;
export type BatchRepair = (typeof kBatchRepairModes)[number];

/** The longest wait between two polls of a batch, by default. */
export const kDefaultBatchPollSeconds = 60;
