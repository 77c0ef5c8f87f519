import { buildSession, type RowInput } from '../session-builder.js';

/**
 * A generic session whose session.json sends its tasks to the model server at `url`. Every
 * request costs the model a prompt of about 1,800 tokens (csv-wave's system and role prompts,
 * at the tiny model's few characters per token), so a test that is about a mechanism (a limit,
 * a budget, a Ctrl-C) runs two or three such tasks, not a whole pipeline's.
 */
export function modelSession(url: string, rows: readonly RowInput[]): string {
  return buildSession(rows, { session: JSON.stringify({ pipeline: 'generic', executor: { type: 'openai', model: 'stories260K', base_url: url } }) });
}
