/** OpenAI's limits on one batch: 50,000 requests, an input file of 200 MB (csv-wave keeps a margin). */
export const kMaxBatchRequests = 50_000;
export const kMaxBatchBytes = 190 * 1024 * 1024;

