export { BullmqBackend, type BullmqBackendOptions } from './bullmq-backend.js';
export { BullmqWorker, type BullmqWorkerOptions } from './bullmq-worker.js';
export { openCoordinator } from './open-coordinator.js';
export { jobIdOf, queueNameOf, kSessionIdPattern } from './jobs/names.js';
export { maskRedisUrl, checkRedisUrl, redisUrlFrom } from './redis/redis-url.js';
export { readJobReply, readSignedJobReply, attemptReplySchema } from './trust/reply-schema.js';
export { Signing } from './trust/signing.js';
export { signingFrom, kSecretEnv, type SecretOptions } from './trust/secret-source.js';
