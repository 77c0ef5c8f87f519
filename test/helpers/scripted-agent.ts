import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** samples/brainstorm/scripted-agent.mjs: a deterministic stand-in for every brainstorm and analyze role. */
export const kScriptedAgentPath = fileURLToPath(new URL('../../samples/brainstorm/scripted-agent.mjs', import.meta.url));

/** The command template that runs the scripted agent for each task. */
export const kScriptedAgentCmd = `node ${JSON.stringify(kScriptedAgentPath)}`;

/** The data field that identifies a discovery of each type (DESIGN.md section 7). */
const kDedupField: Record<string, string> = {
  idea: 'title',
  critique: 'idea_title',
  theme: 'name',
  proposal: 'title',
  evaluation: 'proposal_title',
  gc_decision: 'round',
};

/** Every line of the session's discoveries.ndjson, as `type key` strings, in file order. */
export function discoveryKeys(sessionDir: string): string[] {
  return readFileSync(join(sessionDir, 'discoveries.ndjson'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const { type, data } = JSON.parse(line) as { type: string; data: Record<string, unknown> };
      const field = kDedupField[type];
      return `${type} ${JSON.stringify(field === undefined ? data : data[field])}`;
    });
}
