import { runOptionEntries } from '../option-table.js';

/** The markers between which docs/options.md holds the generated table. */
export const kOptionsDocStart = '<!-- options:start -->';
export const kOptionsDocEnd = '<!-- options:end -->';

/** A table cell: pipes escaped, so that a doc line with `a|b` stays one cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The run options as a Markdown table, one row per definition of the table (option-table.ts). */
export function optionsTableMarkdown(): string {
  const rows = runOptionEntries().map(([name, definition]) => {
    const flag = definition.flag === undefined ? '' : `\`${definition.flag}\``;
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

/** `text` with the part between the markers replaced by the generated table. */
export function withOptionsTable(text: string): string {
  const start = text.indexOf(kOptionsDocStart);
  const end = text.indexOf(kOptionsDocEnd);
  if (start < 0 || end < start) throw new Error(`docs/options.md needs the markers ${kOptionsDocStart} and ${kOptionsDocEnd}`);
  return `${text.slice(0, start + kOptionsDocStart.length)}\n${optionsTableMarkdown()}\n${text.slice(end)}`;
}
