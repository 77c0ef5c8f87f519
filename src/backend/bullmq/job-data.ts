import type { AttemptRequest } from '../../executors/messages.js';

/** The name of every csv-wave job (one kind of job per queue). */
export const kJobName = 'attempt';

/**
 * What a job carries: the attempt's whole request, as the local pool gets it. It holds no
 * secret: the openai executor's key is read by each worker from its own environment
 * (ExecutorSpec), and commands get the worker's environment.
 */
export interface AttemptJobData {
  request: AttemptRequest;
}
