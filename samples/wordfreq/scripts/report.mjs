// Writes a readable report from the merged counts: the top words, and which words
// appear in only one text (from the findings of the counting tasks, via prev_context).
import { readFileSync } from 'node:fs';

const task = JSON.parse(readFileSync(0, 'utf8'));
const merge = task.upstream.deps[0];
const mergedFile = merge.artifacts.find((path) => path.endsWith('/merged.md'));
const merged = JSON.parse(readFileSync(mergedFile, 'utf8'));
const ranked = Object.entries(merged);
const lines = [
  '# Word frequencies',
  '',
  `Merged by ${merge.id}: ${merge.findings}`,
  '',
  '| rank | word | count |',
  '|---|---|---|',
  ...ranked.slice(0, 15).map(([word, n], i) => `| ${i + 1} | ${word} | ${n} |`),
  '',
  '## Per text',
  '',
  ...task.prev_context.split('\n').map((line) => `- ${line}`),
  '',
];
const longest = ranked.map(([word]) => word).sort((a, b) => b.length - a.length || a.localeCompare(b))[0];
console.log(
  JSON.stringify({
    findings: `Report written to artifacts/${task.id}/report.md; most frequent: ${ranked[0][0]} (${ranked[0][1]}); longest word: ${longest}`,
    artifacts: [{ name: 'report', content: lines.join('\n') }],
    wisdom: { learnings: [`The most frequent word across the texts is "${ranked[0][0]}".`] },
  }),
);
