export { BullmqBackend, type BullmqBackendOptions } from './bullmq-backend.js';
export { BullmqWorker, type BullmqWorkerOptions } from './bullmq-worker.js';
export { openCoordinator } from './open-coordinator.js';
export { jobIdOf, queueNameOf, kSessionIdPattern } from './names.js';
export { sessionIdOf } from './session-id.js';
export { maskRedisUrl, checkRedisUrl, redisUrlFrom } from './redis-url.js';
export { readJobReply, readSignedJobReply, attemptReplySchema } from './reply-schema.js';
export { Signing } from './signing.js';
export { signingFrom, kSecretEnv, type SecretOptions } from './secret-source.js';
