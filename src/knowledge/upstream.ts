import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DiscoveryFile } from '../schema/discovery-file.js';
import type { RegistryEntry } from '../schema/artifact-manifest.js';
import { readDiscoveryFile } from './discovery-files.js';
import type { KnownFiles } from './known-files.js';
import { readWisdom } from './wisdom.js';
import { isInside } from '../files/session-path.js';

export interface DependencyState {
  id: string;
  status: string;
  findings: string;
}

/** A dependency as a task sees it (DESIGN.md section 7). */
export interface UpstreamTask extends DependencyState {
  /** Parsed `discoveries/<id>.json`, or null when the dependency wrote none. */
  discovery: DiscoveryFile | null;
  /** Artifact files of the dependency that exist (paths relative to the session folder). */
  artifacts: string[];
  /**
   * What the dependency changed in its git worktree (`--workdir worktree`): the branch
   * holding its commit and its patch artifact; absent when it changed nothing there.
   */
  changes?: { branch: string; patch: string } | undefined;
}

export interface UpstreamContext {
  deps: UpstreamTask[];
  /** Contents of `wisdom/*.md` by file name. */
  wisdom: Record<string, string>;
  /** Artifacts named by dependencies that are missing on disk: a warning, not an error. */
  warnings: string[];
  /**
   * The manifests of the artifacts the dependencies made (the session's artifact registry,
   * seed 003): their latest version, with its validation status. Absent when they made none.
   */
  manifests?: RegistryEntry[] | undefined;
}

/**
 * A task's upstream context (seed 000, context loading): each dependency's status and
 * findings, its discovery file and its artifacts, and the wisdom files. An artifact that
 * a discovery file names but that is missing is a warning, not an error. `known` spares the
 * checks for files the run knows are missing.
 */
export function buildUpstream(sessionDir: string, deps: readonly DependencyState[], known?: KnownFiles): UpstreamContext {
  const warnings: string[] = [];
  const upstream: UpstreamTask[] = deps.map(({ id, status, findings }) => {
    // Most dependencies of a batch wrote no discovery file: no read, nothing to check.
    if (known?.mayHaveDiscovery(id) === false) return { id, status, findings, discovery: null, artifacts: [] };
    const discovery = readDiscoveryFile(sessionDir, id);
    const artifacts: string[] = [];
    for (const path of discovery?.artifacts_produced ?? []) {
      if (!isInside(sessionDir, resolve(sessionDir, path))) warnings.push(`Artifact ${path} of ${id} is outside the session: left out`);
      else if (existsSync(join(sessionDir, path))) artifacts.push(path);
      else warnings.push(`Artifact ${path} of ${id} is missing`);
    }
    return { id, status, findings, discovery, artifacts };
  });
  return { deps: upstream, wisdom: known?.mayHaveWisdom() === false ? {} : readWisdom(sessionDir), warnings };
}
