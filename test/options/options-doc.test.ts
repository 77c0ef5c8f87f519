import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { flagsTableMarkdown, kFlagsDocEnd, kFlagsDocStart, kOptionsDocEnd, kOptionsDocStart, optionsTableMarkdown, withFlagsTable, withOptionsTable } from '../../src/options/options-doc.js';
import { flagOptionEntries, runOptionEntries } from '../../src/option-table.js';

const kDoc = new URL('../../docs/options.md', import.meta.url);
const kManyMachines = new URL('../../docs/many-machines.md', import.meta.url);

describe('docs/options.md', () => {
  test('holds the table made from src/option-table.ts (else run `npm run docs:options`)', () => {
    const text = readFileSync(kDoc, 'utf8');
    expect(text, 'docs/options.md is out of date with the options table: run `npm run docs:options` and commit it').toBe(withOptionsTable(text));
  });

  test('has a row per option, between the markers', () => {
    const text = readFileSync(kDoc, 'utf8');
    const inside = text.slice(text.indexOf(kOptionsDocStart), text.indexOf(kOptionsDocEnd));
    for (const [name] of runOptionEntries()) expect(inside, name).toContain(`| \`${name}\` |`);
    expect(optionsTableMarkdown().split('\n')).toHaveLength(runOptionEntries().length + 2);
  });

  test.each([
    ['docs/options.md', kDoc],
    ['docs/many-machines.md', kManyMachines],
  ])('%s holds the backend and worker flags made from the table (else run `npm run docs:options`)', (name, url) => {
    const text = readFileSync(url, 'utf8');
    expect(text, `${name} is out of date with the options table: run \`npm run docs:options\` and commit it`).toBe(withFlagsTable(text));
    const inside = text.slice(text.indexOf(kFlagsDocStart), text.indexOf(kFlagsDocEnd));
    for (const [, definition] of flagOptionEntries()) expect(inside, definition.flag).toContain(`| \`${definition.flag}\` |`);
    expect(flagsTableMarkdown().split('\n')).toHaveLength(flagOptionEntries().length + 2);
  });
});
