import { flagOptionEntries, runOptionEntries } from '../option-table.js';

/** The markers between which docs/options.md holds the generated table. */
export const kOptionsDocStart = '<!-- options:start -->';
export const kOptionsDocEnd = '<!-- options:end -->';
/** The markers between which docs/options.md and docs/many-machines.md hold the backend's, the worker's and status's flags. */
export const kFlagsDocStart = '<!-- flags:start -->';
export const kFlagsDocEnd = '<!-- flags:end -->';

/** A table cell: pipes escaped, so that a doc line with `a|b` stays one cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The run options as a Markdown table, one row per definition of the table (option-table.ts). */
export function optionsTableMarkdown(): string {
  const rows = runOptionEntries().map(([name, definition]) => {
    const flag = definition.flag === undefined ? '' : `\`${definition.flag}\`${definition.negation === undefined ? '' : `, \`${definition.negation}\``}`;
    const key = definition.key === undefined ? '' : `\`${definition.key}\``;
    const commands = definition.commands.join(', ');
    // A flag in other units (--retry-delay in seconds, retryBaseMs in ms) says both.
    const how = definition.fromText;
    const what = typeof how === 'object' ? `${definition.what}; the flag: ${how.what}` : definition.what;
    return `| \`${name}\` | ${cell(flag)} | ${key} | ${cell(what)} | ${cell(definition.defaultText)} | ${commands} | ${cell(definition.doc)} |`;
  });
  return [
    '| option | flag | session.json | value | default | commands | what it does |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The backend's, the worker's and status's flags as a Markdown table, one row per definition (option-table.ts' kFlagOptionTable). */
export function flagsTableMarkdown(): string {
  const rows = flagOptionEntries().map(([, definition]) => {
    const commands = definition.commands.join(', ') + (definition.repeatable ? ' (repeatable)' : '');
    return `| \`${cell(definition.flag!)}\` | ${commands} | ${cell(definition.what)} | ${cell(definition.defaultText)} | ${cell(definition.doc)} |`;
  });
  return ['| flag | commands | value | default | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** `text` with the part between `start` and `end` replaced by `table`. */
function between(text: string, start: string, end: string, table: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the doc needs the markers ${start} and ${end}`);
  return `${text.slice(0, from + start.length)}\n${table}\n${text.slice(to)}`;
}

/** `text` (docs/options.md) with the part between the markers replaced by the generated table. */
export function withOptionsTable(text: string): string {
  return between(text, kOptionsDocStart, kOptionsDocEnd, optionsTableMarkdown());
}

/** `text` (docs/options.md, docs/many-machines.md) with the part between the flags' markers replaced by their generated table. */
export function withFlagsTable(text: string): string {
  return between(text, kFlagsDocStart, kFlagsDocEnd, flagsTableMarkdown());
}
