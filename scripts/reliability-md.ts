/**
 * RELIABILITY.md is written by several scripts, each between its own markers
 * (`<!-- reliability:NAME -->` … `<!-- /reliability:NAME -->`); text outside the markers
 * is left as it is, so it can be edited freely.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const kReliabilityFile = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'RELIABILITY.md');

/** Replaces the section NAME of RELIABILITY.md (re-read just before), or appends it. */
export function writeReliabilitySection(name: string, body: string): void {
  const begin = `<!-- reliability:${name} -->`;
  const end = `<!-- /reliability:${name} -->`;
  const block = `${begin}\n${body.trimEnd()}\n${end}`;
  let text = existsSync(kReliabilityFile)
    ? readFileSync(kReliabilityFile, 'utf8')
    : '# Reliability\n\nHow csv-wave behaves when things go wrong, with measured figures. Each figure section is\n' +
      'written by its script between its markers; re-run the script to refresh it.\n';
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) text = `${text.slice(0, from)}${block}${text.slice(to + end.length)}`;
  else text = `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(kReliabilityFile, text);
}
