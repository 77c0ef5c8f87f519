/**
 * Renders a command template: `{name}` becomes the value of that column, quoted for the
 * place it stands in; `{{` and `}}` are literal braces; a name that is not a column stays
 * as written. Outside quotes the value is single-quoted; inside a template's own double
 * quotes (`"{file}"`) `"`, `$`, backquote and backslash are escaped; inside its single
 * quotes (`'{file}'`) a `'` closes, escapes and reopens them. Either way /bin/sh receives
 * the cell exactly, and no cell can run code: `$(...)`, backquotes, quotes and newlines
 * arrive as plain text.
 *
 * Where no quoting is safe — inside backquotes, in a comment, after a here-document
 * operator, inside `${...}`, from a `$'...'` on — the template is refused (checkTemplate,
 * before any task starts).
 */
export function renderCommand(template: string, values: Readonly<Record<string, string>>): string {
  let command = '';
  for (const part of parseTemplate(template)) {
    if (part.kind === 'text') command += part.text;
    else if (!Object.hasOwn(values, part.name)) command += part.raw;
    else command += quoteFor(part.context, values[part.name]!, part.name);
  }
  return command;
}

export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The problems of a template for these columns, each a sentence that shows the fix; empty
 * when every placeholder of a known column stands where it can be quoted.
 */
export function templateProblems(template: string, columns: Iterable<string>): string[] {
  const known = new Set(columns);
  const problems: string[] = [];
  for (const part of parseTemplate(template)) {
    if (part.kind === 'placeholder' && known.has(part.name) && kUnquotable[part.context] !== undefined) {
      problems.push(`${part.raw} ${kUnquotable[part.context]!.replace('{name}', part.raw)}`);
    }
  }
  return problems;
}

/** Where a placeholder stands in the shell text around it. */
type Context =
  /** Outside quotes, or in a `$(...)` (whose inside is parsed afresh). */
  | 'plain'
  /** Inside the template's own single quotes. */
  | 'single'
  /** Inside the template's own double quotes. */
  | 'double'
  /** Inside backquotes, whose backslash rules differ between shells. */
  | 'backquote'
  /** In a `#` comment: a newline in the cell would end it and run the rest. */
  | 'comment'
  /**
   * Inside `${...}`, or after one that holds quotes or commands: shells disagree on the
   * quoting inside (dash and bash nest double quotes there) and so on where it ends.
   */
  | 'param'
  /**
   * In or after a `$'...'`: bash reads backslash escapes there, dash has no such quotes, so
   * the two end the string at different places.
   */
  | 'ansic'
  /** After `<<`: a here-document body expands `$(...)` whatever the quotes. */
  | 'heredoc'
  /**
   * After a `case` inside `$(...)`: its patterns end in a `)` that does not close the
   * `$(`, so where the quoting stands afterwards is not known for sure.
   */
  | 'unsure';

const kUnquotable: Partial<Record<Context, string>> = {
  backquote: 'is inside backquotes, where a cell cannot be quoted safely: write $(...) instead of `...`',
  comment: 'is in a shell comment, which a newline in the cell would end: take it out of the comment',
  heredoc:
    'follows a here-document (<<), whose body runs $(...) in a cell: pipe the value instead, e.g. printf \'%s\\n\' {name} | cmd',
  param:
    'is inside ${...} (or after one holding quotes or commands), where shells quote differently: assign the cell to a variable first, e.g. x={name}; echo "${U:-$x}"',
  ansic: "is inside or after a $'...' string, which bash and dash end at different places: write '...' or \"...\" instead",
  unsure: 'follows a case statement inside $(...), after which csv-wave cannot tell how to quote it: move the case into a script, or the placeholder before it',
};

type TemplatePart = { kind: 'text'; text: string } | { kind: 'placeholder'; name: string; raw: string; context: Context };

const kToken = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)\}/y;
/** Characters after which `#` starts a comment (it must begin a word). */
const kWordStart = new Set([undefined, ' ', '\t', '\n', ';', '&', '|', '(', ')']);

/**
 * Splits a template into text and placeholders, following the shell's quoting as far as
 * placement needs: quotes, backslashes, `$(...)` nesting, backquotes, comments, `<<`.
 */
function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = '';
  // The innermost context last; `$(` inside double quotes starts a plain one.
  const stack: Context[] = ['plain'];
  // Open parentheses per `$(` level, so that the `)` that closes it is known.
  const parens: number[] = [0];
  let heredoc = false;
  let unsure = false;
  // A `$'` was seen: from there on where quotes end depends on the shell.
  let ansic = false;
  // A `${...}` held quotes or commands: where it ended depends on the shell.
  let tangled = false;
  // The `{` at `at` is the brace of a `${` just opened.
  let paramBrace = false;
  const top = (): Context => stack[stack.length - 1]!;
  const place = (): Context =>
    heredoc ? 'heredoc' : ansic ? 'ansic' : tangled || stack.includes('param') ? 'param' : unsure ? 'unsure' : top();
  /** Opens a nested context; quotes or commands inside a `${...}` make its end unsure. */
  const push = (context: Context): void => {
    if (stack.includes('param')) tangled = true;
    stack.push(context);
  };
  let at = 0;
  while (at < template.length) {
    kToken.lastIndex = at;
    const token = kToken.exec(template);
    const afterDollar = paramBrace;
    paramBrace = false;
    if (token) {
      const [raw, name] = token;
      if (name === undefined) {
        text += raw[0];
        // `}}` renders as the `}` that closes a `${`.
        if (raw === '}}' && top() === 'param') stack.pop();
      } else {
        if (text !== '') parts.push({ kind: 'text', text });
        text = '';
        parts.push({ kind: 'placeholder', name, raw, context: place() });
        // `${name}`: the placeholder's own braces were the `${...}`, now closed.
        if (afterDollar) stack.pop();
      }
      at += raw.length;
      continue;
    }
    const char = template[at]!;
    const next = template[at + 1];
    const context = top();
    let length = 1;
    if (context === 'single') {
      if (char === "'") stack.pop();
    } else if (context === 'comment') {
      if (char === '\n') stack.pop();
    } else if (char === '\\') {
      length = 2; // the escaped character means nothing to quoting
    } else if (context === 'backquote') {
      if (char === '`') stack.pop();
    } else if (char === '`') {
      push('backquote');
    } else if (char === '$' && next === '(') {
      push('plain');
      parens.push(0);
      length = 2;
    } else if (char === '$' && next === '$') {
      length = 2; // the shell's pid, not a `$` before the next character
    } else if (char === '$' && next === '{') {
      // The `{` stays for the next step: it may begin `{{` or a placeholder.
      push('param');
      paramBrace = true;
    } else if (context === 'double') {
      if (char === '"') stack.pop();
    } else if (context === 'param' && char === '}') {
      stack.pop();
    } else if (char === '$' && next === "'") {
      ansic = true;
      push('single');
      length = 2;
    } else if (char === "'") {
      push('single');
    } else if (char === '"') {
      push('double');
    } else if (char === '#' && kWordStart.has(template[at - 1])) {
      stack.push('comment');
    } else if (stack.length > 1 && kWordStart.has(template[at - 1]) && /^case\s/.test(template.slice(at, at + 5))) {
      unsure = true;
    } else if (char === '<' && next === '<') {
      heredoc = true;
      length = 2;
    } else if (context === 'param') {
      // Parentheses in a `${...}` word are plain text to the shell.
    } else if (char === '(') {
      parens[parens.length - 1]!++;
    } else if (char === ')') {
      if (parens[parens.length - 1]! > 0) parens[parens.length - 1]!--;
      else if (stack.length > 1) {
        stack.pop();
        parens.pop();
      }
    }
    text += template.slice(at, at + length);
    at += length;
  }
  if (text !== '') parts.push({ kind: 'text', text });
  return parts;
}

function quoteFor(context: Context, value: string, name: string): string {
  switch (context) {
    case 'plain':
      return shellQuote(value);
    case 'single':
      // The template's quote is closed, the cell's own quotes escaped, and it reopens.
      return value.replace(/'/g, `'\\''`);
    case 'double':
      return value.replace(/["$`\\]/g, '\\$&');
    default:
      // checkTemplate refuses such a template before any task starts.
      throw new Error(`{${name}} ${kUnquotable[context]!}`);
  }
}
