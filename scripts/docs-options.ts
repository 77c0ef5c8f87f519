/**
 * Writes the generated tables of docs/options.md (the run options; the backend's, the
 * worker's and status's flags) and docs/many-machines.md (the flags) from src/option-table.ts
 * (`npm run docs:options`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withFlagsTable, withOptionsTable } from '../src/options/options-doc.js';

const options = new URL('../docs/options.md', import.meta.url);
writeFileSync(options, withFlagsTable(withOptionsTable(readFileSync(options, 'utf8'))));
const machines = new URL('../docs/many-machines.md', import.meta.url);
writeFileSync(machines, withFlagsTable(readFileSync(machines, 'utf8')));
console.log('wrote docs/options.md and docs/many-machines.md');
