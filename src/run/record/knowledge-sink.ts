import type { TaskRow } from '../../core/task.js';
import type { SessionFileWriter } from '../../layout.js';
import type { FileFormat, TasksTable } from '../../csv/tasks-table.js';
import { serializeWaveFile } from '../../csv/wave-file.js';
import type { AttemptReply, TaskLimits, WorkerReply } from '../../executors/messages.js';
import { writeAttemptFiles } from './attempt-files.js';
import { DiscoveryBoard } from '../../knowledge/discoveries-board.js';
import {
  wantsDiscoveryFile,
  writeDiscoveryFile,
  type DiscoveryFileInput,
  type DiscoveryFilePolicy,
} from '../../knowledge/discovery-files.js';
import { forgetCheckedFolders } from '../../files/session-path.js';
import { recordUsage, type RequestUsage } from '../../knowledge/usage.js';
import type { PriceTable } from '../../knowledge/pricing.js';
import type { UsageLine } from '../../knowledge/usage.js';
import { KnownFiles } from '../../knowledge/known-files.js';
import { buildUpstream, type DependencyState, type UpstreamContext } from '../../knowledge/upstream.js';
import type { RegistryEntry } from '../../schema/artifact-manifest.js';
import { appendWisdom, kWisdomKinds, type WisdomKind } from '../../knowledge/wisdom.js';
import { UsageWriter } from '../../session/usage-writer.js';
import { SessionWriter } from '../../session/files/session-writer.js';
import { waveFile } from '../../layout.js';
import { PrevContexts } from '../prev-contexts.js';

/** What is told of the wave files a run writes (report/wave-contexts.ts's cache). */
export interface WaveFilesSeen {
  /** A wave file just written at `path`, with the prev_context cells it holds by task id, as written. */
  written(path: string, name: string, format: FileFormat, contexts: Map<string, string>): void;
}

export interface KnowledgeSinkSetup {
  sessionDir: string;
  /** The session's writer, which every file of the sink goes through. @default one of `sessionDir` */
  files?: SessionFileWriter;
  /** The run's table: its rows and format as they stand when a wave file is written. */
  table: TasksTable;
  /** Which tasks get `discoveries/<id>.json`. */
  discoveryFiles: DiscoveryFilePolicy;
  /** Bytes of one line of discoveries.ndjson at most. */
  maxDiscoveryLineBytes: number;
  /** The run's output caps, which each attempt's files are checked against (a reply may come from anywhere). */
  limits: TaskLimits;
  /** The prev_context cap, for a wave file written without the run's prev_context (a sink used alone). */
  prevContextCap: number;
  /** Told each wave file written, so that report.html need not parse it again. */
  waveContexts?: WaveFilesSeen;
  warn: (message: string) => void;
  /** Prices by model, to put each request's cost in its usage line. @default none */
  pricing?: PriceTable;
  /** Told the usage lines of each attempt that came back (the run's budget). */
  onUsage?: (lines: readonly UsageLine[]) => void;
  /** The latest manifests of the artifacts these tasks made (the artifact registry): a task's upstream manifests. @default none */
  manifests?: (taskIds: readonly string[]) => RegistryEntry[];
}

/**
 * Everything a run writes into the session folder about what its tasks produced, on the
 * engine's main thread (workers write nothing there): each attempt's artifacts and
 * discovery file, the discoveries board, wisdom, token usage, the discovery files of
 * failed and skipped tasks, and the wave files. Its methods throw when the folder cannot
 * take a write; the caller decides what that stops.
 */
export class KnowledgeSink {
  readonly #setup: KnowledgeSinkSetup;
  readonly #board: DiscoveryBoard;
  readonly #known: KnownFiles;
  readonly #usage: UsageWriter;
  readonly #files: SessionFileWriter;

  constructor(setup: KnowledgeSinkSetup) {
    this.#setup = setup;
    this.#files = setup.files ?? new SessionWriter(setup.sessionDir);
    this.#usage = new UsageWriter({ ...setup, files: this.#files });
    // A run writes from the main thread, which outlives runs: what an earlier run checked may be gone.
    forgetCheckedFolders();
    this.#known = new KnownFiles(setup.sessionDir);
    this.#board = new DiscoveryBoard(this.#files, setup.warn, { maxLineBytes: setup.maxDiscoveryLineBytes });
  }

  /**
   * The files of one finished attempt, written before its reply reaches the scheduler
   * (the findings cell it records points at them). Never throws: a write that fails
   * becomes the reply (see writeAttemptFiles).
   */
  attemptFiles(taskId: string, reply: AttemptReply): WorkerReply {
    const { discoveryFiles, limits } = this.#setup;
    return writeAttemptFiles(this.#files, taskId, reply, discoveryFiles, limits, this.#known);
  }

  /**
   * The tokens of each model request of an attempt that came back, whatever becomes of it
   * (finished, retried, repaired, timed out): one usage.ndjson line each, but for those a
   * live report (liveUsage) wrote already.
   */
  attemptUsage(taskId: string, attempt: number, reply: AttemptReply): void {
    this.#usage.reply(taskId, attempt, reply.requests);
  }

  /** One model request's tokens, told by its worker as the answer arrived: written at once, so that a cancel loses none. */
  liveUsage(taskId: string, attempt: number, request: RequestUsage): void {
    this.#usage.live(taskId, attempt, request);
  }

  /** What an attempt sees of its dependencies and the wisdom files, read here on the main thread. */
  upstream(deps: readonly DependencyState[]): UpstreamContext {
    const upstream = buildUpstream(this.#setup.sessionDir, deps, this.#known);
    const manifests = this.#setup.manifests?.(deps.map((dep) => dep.id)) ?? [];
    return manifests.length === 0 ? upstream : { ...upstream, manifests };
  }

  /** A task finished (completed, failed or skipped): its notes, discoveries, wisdom and usage. */
  taskFinished(row: TaskRow, reply: WorkerReply | undefined): void {
    const { warn } = this.#setup;
    for (const note of reply?.notes ?? []) warn(`${row.id}: ${note}`);
    this.#recordKnowledge(row, reply);
    // A model attempt's requests were written as it came back (attemptUsage); a reply that
    // tells only a sum of its tokens is written here.
    if (reply?.usage && reply.requests === undefined) recordUsage(this.#files, row.id, reply.usage);
  }

  /**
   * Wave N is about to run (waves) or has started every task (eager): its wave file, with
   * the prev_context its tasks' requests got or will get (`contexts`, the run's attempt
   * planner's). Without it, as when the sink is used alone, each cell is built here.
   */
  waveReady(wave: number, contexts?: PrevContexts): void {
    const { table, prevContextCap } = this.#setup;
    // Waves change when an interactive task adds tasks: read them from the rows.
    const waveCell = String(wave);
    const rows = table.rows.filter((row) => row.wave === waveCell && row.exec_mode !== 'interactive');
    // Built once per wave file, and only for a wave whose tasks take context from others.
    let byId: Map<string, TaskRow> | undefined;
    const lookup = (id: string) => (byId ??= new Map(table.rows.map((row) => [row.id, row]))).get(id);
    const withContext = (contexts ?? new PrevContexts(lookup, prevContextCap)).forWaveFile(rows);
    const name = waveFile(wave);
    const path = this.#files.replace(name, serializeWaveFile(withContext, table.format));
    this.#setup.waveContexts?.written(path, name, table.format, new Map(withContext.map(({ row, prevContext }) => [row.id, prevContext])));
  }

  /** Knowledge files of a finished task: discoveries, wisdom, and the discovery file when its attempt wrote none. */
  #recordKnowledge(row: TaskRow, reply: WorkerReply | undefined): void {
    const { discoveryFiles } = this.#setup;
    if (reply?.kind === 'finished') {
      this.#board.add(row.id, reply.discoveries);
      for (const kind of kWisdomKinds) this.#appendWisdom(row.id, kind, reply.wisdom[kind] ?? []);
      if (reply.supervision_verdict === 'warn') {
        const score = reply.supervision_score == null ? '' : ` (score ${reply.supervision_score})`;
        this.#appendWisdom(row.id, 'issues', [`Supervisor checkpoint warned${score}: ${row.findings}`]);
      }
      return;
    }
    const discovery: DiscoveryFileInput = {
      taskId: row.id,
      role: row.role,
      status: row.status === 'skipped' ? 'skipped' : 'failed',
      findings: '',
      error: row.error,
      artifacts: [],
    };
    if (wantsDiscoveryFile(discoveryFiles, discovery)) {
      writeDiscoveryFile(this.#files, discovery);
      this.#known.discoveryWritten(row.id);
    }
  }

  #appendWisdom(taskId: string, kind: WisdomKind, entries: readonly string[]): void {
    if (entries.length === 0) return;
    // Known before the write: a write cut short may still have made the folder.
    this.#known.wisdomWritten();
    appendWisdom(this.#files, taskId, kind, entries);
  }
}
