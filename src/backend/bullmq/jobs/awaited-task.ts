import type { AttemptRequest, TaskLimits } from '../../../executors/messages.js';
import type { ReplyRules } from '../../../executors/reply-rules.js';
import { SecretScrubber } from '../../../text/secret-scrubber.js';

/**
 * What the backend keeps of a queued attempt, to hold its reply to the rules of every
 * reply (executors/reply-rules.ts): the task's id and the rules of its role. Not the
 * request: 100,000 queued attempts keep no 100,000 requests alive.
 */
export interface AwaitedTask {
  taskId: string;
  rules: ReplyRules;
}

const kNoLimits: TaskLimits = {};

/**
 * The rules of each role's replies, made once and shared: a run's attempts have one
 * pipeline and one set of caps, and a few roles between them, so a queued attempt costs
 * a pointer to one of a few objects. The secrets of the coordinator's environment are read
 * once, when the backend opens, not at each reply.
 */
export class RulesByRole {
  readonly #rules = new Map<string, ReplyRules>();
  readonly #secrets = SecretScrubber.fromEnv();

  of(request: AttemptRequest): ReplyRules {
    const pipeline = request.pipeline ?? 'generic';
    const role = request.task.row.role ?? '';
    const limits = request.limits ?? kNoLimits;
    const key = `${pipeline}\n${role}`;
    const known = this.#rules.get(key);
    if (known !== undefined && sameLimits(known.limits, limits)) return known;
    // A copy of the caps: the request's own object is the request's, not the backend's to keep.
    const rules: ReplyRules = { pipeline, role, limits: { ...limits }, secrets: this.#secrets };
    this.#rules.set(key, rules);
    return rules;
  }
}

function sameLimits(a: TaskLimits, b: TaskLimits): boolean {
  return a.maxStdoutBytes === b.maxStdoutBytes && a.maxArtifactsPerTask === b.maxArtifactsPerTask && a.maxArtifactBytes === b.maxArtifactBytes;
}
