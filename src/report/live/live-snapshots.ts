import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../../session/session.js';
import { embedJson } from '../page/embed-json.js';
import { buildReportData } from '../report-data.js';
import { reportPage } from '../page/report-html.js';
import { currentTasks } from '../session-state.js';
import { WaveContexts } from '../wave-contexts.js';
import { kLayout } from '../../layout.js';

/** The files whose change means the page should update. */
const kWatched = [kLayout.tasks, kLayout.journal, kLayout.attempts, kLayout.discoveries];

/**
 * The page's data at one change of the session's files. It is built once per change and the
 * same bytes go to every client: a client that reads slowly holds a reference to them, not
 * a copy of its own.
 */
export interface Snapshot {
  /** 1 for the first snapshot of the server, then one more per change. */
  readonly generation: number;
  /** The data as JSON, as `embedJson` writes it (no `<`, `>` or `&`): the body of `/data`. */
  readonly data: Buffer;
  /** The report page around the data, made at the first request for it. */
  page(): Buffer;
}

/** The size and time of each watched file: a change of any of them is a change of the session. */
function filesSignature(sessionDir: string): string {
  return kWatched
    .map((file) => {
      const stat = statSync(join(sessionDir, file), { throwIfNoEntry: false });
      return stat ? `${stat.mtimeMs}:${stat.size}` : '-';
    })
    .join('|');
}

/** The snapshots of one session for `serve`: the latest one, and a new one when the files changed. */
export class LiveSnapshots {
  readonly #session: Session;
  /** Kept across builds: unchanged wave files are not parsed again at every change. */
  readonly #waveContexts = new WaveContexts();
  #latest: Snapshot | undefined;
  #signature = '';
  #notBefore = 0;

  constructor(session: Session) {
    this.#session = session;
  }

  /** The last snapshot built, if any. */
  get latest(): Snapshot | undefined {
    return this.#latest;
  }

  /**
   * The snapshot of the files as they are now: the last one when no watched file changed, a
   * new one otherwise. A big session takes a while to read, so after a build the next one
   * waits four times as long (the server spends at most a fifth of its time reading) and the
   * last snapshot is given meanwhile. A read that fails (a file caught mid-edit by a person)
   * gives the last snapshot too, and is tried again at the next call; it throws only when
   * there is no snapshot yet.
   */
  refresh(): Snapshot {
    const signature = filesSignature(this.#session.dir);
    const latest = this.#latest;
    if (latest && (signature === this.#signature || performance.now() < this.#notBefore)) return latest;
    const generation = (latest?.generation ?? 0) + 1;
    const started = performance.now();
    let data: Buffer;
    try {
      const pricing = this.#session.config.pricing;
      const report = buildReportData(this.#session.dir, currentTasks(this.#session), { live: true, waveContexts: this.#waveContexts, ...(pricing ? { pricing } : {}) });
      data = Buffer.from(embedJson({ ...report, generation }), 'utf8');
    } catch (error) {
      if (latest) return latest;
      throw error;
    } finally {
      this.#notBefore = performance.now() + 4 * (performance.now() - started);
    }
    this.#signature = signature;
    let page: Buffer | undefined;
    this.#latest = { generation, data, page: () => (page ??= reportPage(data)) };
    return this.#latest;
  }
}
