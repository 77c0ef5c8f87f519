import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { sessionPathForRead } from '../files/session-path.js';
import type { UpstreamContext } from './upstream.js';
import { kLayout } from '../layout.js';

/**
 * What a model prompt shows of the session besides the task's own row: the pipeline and
 * topic, and digests of the discoveries board, the dependencies' outputs (artifacts
 * included) and the wisdom files. The engine reads them on its main thread and sends
 * them with the request, so that a worker never reads the session folder.
 */
export interface PromptContext {
  pipeline: string;
  /** The session's topic; empty when none was given. */
  topic: string;
  discoveries: string;
  upstream: string;
  wisdom: string;
}

/** The digests every task of a wave shows alike: the board's and the wisdom files'. */
export type SharedDigests = Pick<PromptContext, 'discoveries' | 'wisdom'>;

/**
 * Reads the prompt context of one attempt from the session folder. With `wave`, the shared
 * digests are those of the wave's snapshot (WaveDigests), read by its first attempt.
 */
export function buildPromptContext(
  sessionDir: string,
  session: { pipeline: string; topic: string },
  upstream: UpstreamContext,
  wave?: { number: number; digests: WaveDigests },
): PromptContext {
  const read = (): SharedDigests => ({ discoveries: discoveriesDigest(sessionDir), wisdom: wisdomDigest(upstream) });
  const shared = wave === undefined ? read() : wave.digests.of(wave.number, read);
  return {
    pipeline: session.pipeline,
    topic: session.topic,
    discoveries: shared.discoveries,
    upstream: upstreamDigest(sessionDir, upstream),
    wisdom: shared.wisdom,
  };
}

/** Waves whose snapshot is kept: a retry of a task of an older wave reads the digests again. */
const kKeptWaves = 16;

/**
 * The discoveries and wisdom digests of each wave as its first attempt read them. The tasks
 * of a wave then get one text, byte for byte, though tasks of the wave finish and add to the
 * board meanwhile: the part of the prompt that the tasks of a role share stays one prefix,
 * which a provider's prompt cache serves (docs/executors.md#prompt-caching). With
 * `--schedule waves` the snapshot is the board as the wave starts; with `eager`, as the
 * wave's first task starts.
 */
export class WaveDigests {
  readonly #byWave = new Map<number, SharedDigests>();

  of(wave: number, read: () => SharedDigests): SharedDigests {
    let digests = this.#byWave.get(wave);
    if (digests === undefined) {
      digests = read();
      this.#byWave.set(wave, digests);
      // A Map iterates in insertion order: the first key is the oldest snapshot.
      if (this.#byWave.size > kKeptWaves) this.#byWave.delete(this.#byWave.keys().next().value!);
    }
    return digests;
  }
}

/** What `{discoveries}` shows of discoveries.ndjson: the newest lines, within a budget. */
const kDigestLines = 30;
const kDigestChars = 4000;
const kDigestTailBytes = 256 * 1024;
/** What `{upstream}` shows of the dependencies' artifacts. */
const kArtifactChars = 6000;
const kUpstreamChars = 16000;
/** What `{wisdom}` shows: the end of each file, where the newest entries are. */
const kWisdomFileChars = 1000;
const kWisdomChars = 3000;
/** A newest-last digest of discoveries.ndjson, read from the end so that its size does not matter. */
function discoveriesDigest(session: string): string {
  const path = join(session, kLayout.discoveries);
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - kDigestTailBytes);
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    text = buffer.toString('utf8');
    // A read that starts inside the file starts inside a line.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const entries: string[] = [];
  for (const line of text.split('\n').filter((l) => l.trim() !== '').slice(-kDigestLines)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const { type, worker, data } = (parsed ?? {}) as { type?: unknown; worker?: unknown; data?: unknown };
    if (typeof type !== 'string' || data === null || typeof data !== 'object') continue;
    const fields = data as Record<string, unknown>;
    const label = ['title', 'name', 'idea_title', 'proposal_title', 'round']
      .map((field) => fields[field])
      .find((value) => typeof value === 'string' || typeof value === 'number');
    const extra = [fields.severity, fields.rank === undefined ? undefined : `rank ${String(fields.rank)}`, fields.signal]
      .filter((value) => typeof value === 'string' && value !== '')
      .join(', ');
    const by = typeof worker === 'string' ? ` [${worker}]` : '';
    entries.push(`- ${type}: ${label === undefined ? '(untitled)' : oneLine(String(label))}${extra === '' ? '' : ` (${extra})`}${by}`);
  }
  return keepNewest(entries, kDigestChars).join('\n');
}

/** The dependencies' findings, key findings and artifacts: what a prompt cannot read itself. */
function upstreamDigest(session: string, upstream: UpstreamContext): string {
  let budget = kUpstreamChars;
  const parts: string[] = [];
  for (const dep of upstream.deps) {
    const lines = [`### ${dep.id} (${dep.status})`, dep.findings.trim() === '' ? '(no findings)' : dep.findings.trim()];
    const keyFindings = dep.discovery?.data.key_findings ?? [];
    if (keyFindings.length > 0) lines.push('Key findings:', ...keyFindings.map((finding) => `- ${finding}`));
    const decisions = dep.discovery?.data.decisions ?? [];
    if (decisions.length > 0) lines.push('Decisions:', ...decisions.map((decision) => `- ${decision}`));
    if (dep.changes !== undefined) {
      const files = dep.discovery?.data.files_modified ?? [];
      lines.push(`Changes: on the git branch ${dep.changes.branch}, as the patch ${dep.changes.patch}${files.length === 0 ? '' : ` (files: ${files.slice(0, 20).join(', ')}${files.length > 20 ? ', …' : ''})`}`);
    }
    const manifests = (upstream.manifests ?? []).filter((entry) => entry.metadata.task_id === dep.id);
    if (manifests.length > 0) {
      lines.push(
        'Artifact manifests:',
        ...manifests.map(
          (entry) =>
            `- ${entry.artifact_id} (${entry.artifact_type}, version ${entry.version}) at ${entry.path}: ${entry.validation_status}` +
            `${entry.validation_summary === '' ? '' : ` (${entry.validation_summary.replace(/\s+/g, ' ').slice(0, 200)})`}`,
        ),
      );
    }
    for (const artifact of dep.artifacts) {
      if (budget <= 0) {
        lines.push(`(artifact ${artifact} left out: the context is full)`);
        continue;
      }
      const content = readInside(session, artifact);
      if (content === undefined) continue;
      const room = Math.min(kArtifactChars, budget);
      const shown = content.length > room ? `${content.slice(0, room)}\n[… ${content.length - room} more characters]` : content;
      budget -= Math.min(content.length, room);
      lines.push(`#### Artifact ${artifact}`, shown.trim());
    }
    parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}

function wisdomDigest(upstream: UpstreamContext): string {
  const parts = Object.entries(upstream.wisdom)
    .filter(([, text]) => text.trim() !== '')
    .map(([name, text]) => {
      const tail = text.trim().slice(-kWisdomFileChars);
      return `#### ${name}\n${tail.length < text.trim().length ? `…${tail.slice(tail.indexOf('\n') + 1)}` : tail}`;
    });
  return keepNewest(parts, kWisdomChars).join('\n\n');
}

/** A file of the session folder; undefined when it is missing or lies outside the folder. */
function readInside(session: string, path: string): string | undefined {
  try {
    return readFileSync(sessionPathForRead(session, path), 'utf8');
  } catch {
    return undefined;
  }
}

/** The last entries that fit in `budget` characters, in their order. */
function keepNewest(entries: readonly string[], budget: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (used + entry.length + 1 > budget) break;
    kept.unshift(entry);
    used += entry.length + 1;
  }
  return kept;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}
