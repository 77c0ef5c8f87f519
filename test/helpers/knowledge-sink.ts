import type { TasksTable } from '../../src/csv/tasks-table.js';
import { KnowledgeSink, type KnowledgeSinkSetup } from '../../src/run/record/knowledge-sink.js';

/**
 * A KnowledgeSink used alone, over the session folder `dir` and `table`: discovery files
 * when-rich, 64 KiB discovery lines, no output caps, a 16,000-character prev_context,
 * warnings dropped. A test gives what it checks in `overrides`.
 */
export function knowledgeSinkOver(dir: string, table: TasksTable, overrides: Partial<KnowledgeSinkSetup> = {}): KnowledgeSink {
  return new KnowledgeSink({
    sessionDir: dir,
    table,
    discoveryFiles: 'when-rich',
    maxDiscoveryLineBytes: 65536,
    limits: {},
    prevContextCap: 16000,
    warn: () => {},
    ...overrides,
  });
}
