import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { AttemptJobData } from '../../src/backend/bullmq/jobs/job-data.js';
import { jobSigned, requestDigest, Signing } from '../../src/backend/bullmq/trust/signing.js';
import type { AttemptRequest, ExecutorSpec } from '../../src/executors/messages.js';

/**
 * What an attacker with access to the Redis does, with plain BullMQ and no coordinator:
 * requests written by hand, jobs added by hand (signed with a secret of the test's choice,
 * or not), and a model server on loopback that records whatever reaches it.
 */

/** An attempt request as a coordinator sends it, for task `id` run by `executor`. */
export function handMadeRequest(id: string, executor: ExecutorSpec): AttemptRequest {
  return {
    executor,
    task: {
      id,
      wave: 1,
      attempt: 1,
      session: '/tmp',
      row: { id, description: id, role: 'worker' },
      prev_context: '',
      upstream: { deps: [], wisdom: {}, warnings: [] },
    },
    ...(executor.type === 'openai' ? { prompt: { pipeline: 'generic', topic: '', discoveries: '', upstream: '', wisdom: '' } } : {}),
    pipeline: 'generic',
    timeoutMs: 60_000,
  };
}

/** The data of job `jobId` of `queue` holding `request`, signed with `secret` (unsigned without). */
export function jobData(request: AttemptRequest, queue: string, jobId: string, secret?: string): AttemptJobData {
  const digest = requestDigest(request);
  if (secret === undefined) return { request, digest };
  return { request, digest, sig: Signing.withSecret(secret).sign(jobSigned(queue, jobId, digest))! };
}

/** Adds a job with plain BullMQ, as anyone who can write to the Redis can. */
export async function addByHand(url: string, queue: string, jobId: string, data: unknown): Promise<void> {
  const handle = new Queue(queue, { connection: { url } });
  try {
    await handle.add('attempt', data, { jobId, attempts: 1 });
  } finally {
    await handle.close();
  }
}

/** Resolves once the queue holds a waiting job of task `taskId`: its coordinator added it, and no worker took it. */
export async function jobWaits(url: string, queueName: string, taskId: string): Promise<void> {
  const queue = new Queue<AttemptJobData>(queueName, { connection: { url } });
  try {
    // A safety net of a minute, looking every 50 ms: not a measure.
    for (let look = 0; look < 1200; look++) {
      if ((await queue.getWaiting()).some((job) => job.data?.request?.task?.id === taskId)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`Gave up waiting for the job of ${taskId} to wait in ${queueName}`);
  } finally {
    await queue.close();
  }
}

/** A job's state in Redis and BullMQ's reason for failing it. */
export async function jobOutcome(url: string, queue: string, jobId: string): Promise<{ state: string; failedReason: string | undefined }> {
  const handle = new Queue(queue, { connection: { url } });
  try {
    const job = await handle.getJob(jobId);
    return { state: job ? await job.getState() : 'missing', failedReason: job?.failedReason };
  } finally {
    await handle.close();
  }
}

/** How many clients Redis has now (CLIENT LIST), the asking one included. */
export async function redisClientCount(url: string): Promise<number> {
  const client = new Redis(url);
  try {
    const list = (await client.client('LIST')) as string;
    return list.split('\n').filter((line) => line.trim() !== '').length;
  } finally {
    client.disconnect();
  }
}

/** A server on 127.0.0.1 that records every request (its headers) and answers 500. */
export interface RecordingServer {
  baseUrl: string;
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startRecordingServer(): Promise<RecordingServer> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    requests.push(request.headers);
    request.resume();
    response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"recorded"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
