import { z } from 'zod';
import { discoveryFileSchema } from './discovery-file.js';
import { registryEntrySchema } from './artifact-manifest.js';

/**
 * What every task receives: a command on stdin (one JSON document), a module as its first
 * argument. The row's cells are under `row` (`task.row.description`), not at the top.
 * Published as schemas/task-input.schema.json, the descriptions included: it is the
 * contract for task authors. csv-wave builds the input itself, so nothing parses it.
 */
export const taskInputSchema = z
  .object({
    id: z.string().describe('The task id (the id cell)'),
    wave: z.number().int().min(1).describe('The wave the task runs in, from 1'),
    attempt: z.number().int().min(1).describe('1 on the first attempt, 2 on the first retry, and so on'),
    session: z.string().describe('Absolute path of the session folder (a command runs in it)'),
    row: z
      .record(z.string(), z.string())
      .describe("Every column of the task's row by name, extra columns too, as text: row.description, row.role, …"),
    prev_context: z
      .string()
      .describe('The findings of the context_from tasks as [Task <id>] <findings> lines, or "No previous context available"'),
    upstream: z
      .object({
        deps: z
          .array(
            z
              .object({
                id: z.string(),
                status: z.string().describe('completed, failed or skipped'),
                findings: z.string(),
                discovery: discoveryFileSchema.nullable().describe('Its discoveries/<id>.json, or null when it wrote none'),
                artifacts: z.array(z.string()).describe('Its artifact files that exist, relative to the session folder'),
                changes: z
                  .object({
                    branch: z.string().describe('The branch holding its commit, csv-wave/<session id>/<id>'),
                    patch: z.string().describe('Its changes as a patch for git apply, artifacts/<id>/changes.patch'),
                  })
                  .strict()
                  .optional()
                  .describe('With --workdir worktree: what it changed in its worktree; absent when it changed nothing'),
              })
              .strict(),
          )
          .describe('One entry per dependency (the deps cell), in order'),
        wisdom: z.record(z.string(), z.string()).describe('The contents of wisdom/*.md by file name (learnings.md, …)'),
        warnings: z.array(z.string()).describe('Artifacts that dependencies name but that are missing'),
        manifests: z
          .array(registryEntrySchema)
          .optional()
          .describe(
            "The manifests of the artifacts the dependencies made (artifact-registry.json): each artifact's latest version, path and validation_status; absent when they made none",
          ),
      })
      .strict()
      .describe("The dependencies' results and the session's wisdom"),
  })
  .strict();

export type TaskInput = z.infer<typeof taskInputSchema>;
