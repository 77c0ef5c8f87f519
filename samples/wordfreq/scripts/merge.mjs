// Merges the word counts of every dependency, read from the artifacts named in the
// upstream context csv-wave passes on stdin.
import { readFileSync } from 'node:fs';

const task = JSON.parse(readFileSync(0, 'utf8'));
const total = {};
let files = 0;
for (const dep of task.upstream.deps) {
  const countsFile = dep.artifacts.find((path) => path.endsWith('/counts.md'));
  if (!countsFile) {
    console.error(`${dep.id} left no counts artifact`);
    process.exit(1);
  }
  files++;
  for (const [word, n] of Object.entries(JSON.parse(readFileSync(countsFile, 'utf8')))) {
    total[word] = (total[word] ?? 0) + n;
  }
}
const ranked = Object.entries(total).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
const words = ranked.reduce((sum, [, n]) => sum + n, 0);
console.log(
  JSON.stringify({
    findings: `${files} files, ${words} words, ${ranked.length} distinct; top: ${ranked
      .slice(0, 8)
      .map(([word, n]) => `${word} ${n}`)
      .join(', ')}`,
    artifacts: [{ name: 'merged', content: JSON.stringify(Object.fromEntries(ranked), null, 1) }],
  }),
);
