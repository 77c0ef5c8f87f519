/**
 * Renders a command template: `{name}` becomes the shell-quoted value of that column,
 * `{{` and `}}` are literal braces, and a name that is not a column stays as written.
 * Quoting with single quotes makes every character literal to /bin/sh, so no cell can
 * run code: `$(...)`, backticks, quotes and newlines arrive as plain text.
 */
export function renderCommand(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    return Object.hasOwn(values, name!) ? shellQuote(values[name!]!) : match;
  });
}

export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
