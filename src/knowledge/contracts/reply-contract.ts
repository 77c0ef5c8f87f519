import { kArtifactIdPattern, manifestPathProblem, type ArtifactManifest, type ArtifactValidation } from '../../schema/artifact-manifest.js';
import { kBranchNamePattern } from '../../schema/row.js';

/** What a reply says for the contracts between tasks: the branch it chose, its artifacts' manifests, its verdicts. */
export interface ReplyContract {
  route?: string;
  manifests?: ArtifactManifest[];
  validations?: ArtifactValidation[];
}

/** The contract fields of a reply, as it carries them (absent or undefined alike). */
export type ReplyContractInput = { [K in keyof ReplyContract]?: ReplyContract[K] | undefined };

/**
 * A reply's contract fields held to the rules of every reply (executors/reply-rules.ts), on
 * whatever machine made it: texts made safe by `clean`, a manifest's creator role and task
 * its own (filled in when left out), one manifest and one verdict per artifact, and every
 * path one inside the session folder by its text. Returns the fields as they are to be
 * kept, or the problem that refuses the result (invalid output). Changes nothing of fields
 * it made: a worker's reply, ruled there, comes out of the coordinator's pass as it went in.
 */
export function ruleContract(
  taskId: string,
  role: string,
  contract: ReplyContractInput,
  clean: (text: string) => string,
): { ok: true; contract: ReplyContract } | { ok: false; problem: string } {
  const kept: ReplyContract = {};
  if (contract.route !== undefined) {
    if (!kBranchNamePattern.test(contract.route)) return { ok: false, problem: `route: ${JSON.stringify(contract.route.slice(0, 40))} is no branch name` };
    kept.route = contract.route;
  }
  if (contract.manifests !== undefined) {
    const seen = new Set<string>();
    const manifests: ArtifactManifest[] = [];
    for (const [index, manifest] of contract.manifests.entries()) {
      const at = `artifact_manifests.${index}`;
      if (!kArtifactIdPattern.test(manifest.artifact_id)) return { ok: false, problem: `${at}.artifact_id: no artifact id` };
      if (seen.has(manifest.artifact_id)) return { ok: false, problem: `${at}: a second manifest of artifact ${manifest.artifact_id}` };
      seen.add(manifest.artifact_id);
      const pathProblem = manifestPathProblem(manifest.path);
      if (pathProblem !== undefined) return { ok: false, problem: `${at}.path: ${JSON.stringify(manifest.path.slice(0, 80))} ${pathProblem}` };
      const creator = clean(manifest.creator_role ?? role);
      if (creator !== role) return { ok: false, problem: `${at}.creator_role is ${JSON.stringify(creator)}, but ${taskId}'s role is ${JSON.stringify(role)}` };
      const owner = manifest.metadata?.task_id;
      if (owner !== undefined && owner !== taskId) {
        return { ok: false, problem: `${at}.metadata.task_id is ${JSON.stringify(owner.slice(0, 64))}: a task gives manifests of its own artifacts (${taskId})` };
      }
      manifests.push({
        ...manifest,
        creator_role: creator,
        artifact_type: clean(manifest.artifact_type),
        version: clean(manifest.version ?? '1'),
        ...(manifest.validation_summary === undefined ? {} : { validation_summary: clean(manifest.validation_summary) }),
        metadata: { ...manifest.metadata, task_id: taskId },
      });
    }
    kept.manifests = manifests;
  }
  if (contract.validations !== undefined) {
    const seen = new Set<string>();
    const validations: ArtifactValidation[] = [];
    for (const [index, validation] of contract.validations.entries()) {
      if (seen.has(validation.artifact_id)) {
        return { ok: false, problem: `artifact_validations.${index}: a second verdict on artifact ${validation.artifact_id}` };
      }
      seen.add(validation.artifact_id);
      validations.push({
        ...validation,
        ...(validation.validation_summary === undefined ? {} : { validation_summary: clean(validation.validation_summary) }),
      });
    }
    kept.validations = validations;
  }
  return { ok: true, contract: kept };
}
