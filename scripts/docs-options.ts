/** Writes the run options table of docs/options.md from src/option-table.ts (`npm run docs:options`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { withOptionsTable } from '../src/options/options-doc.js';

const file = new URL('../docs/options.md', import.meta.url);
writeFileSync(file, withOptionsTable(readFileSync(file, 'utf8')));
console.log('wrote docs/options.md');
