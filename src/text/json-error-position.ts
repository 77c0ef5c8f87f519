/** Where JSON.parse refused a text, and why, said the same way on every Node version. */
export interface JsonErrorPosition {
  /** 1-based line of the first syntax error. */
  line: number;
  /** 1-based column of the first syntax error. */
  column: number;
  /** V8's reason, on one line, without the parts that vary by Node version. */
  detail: string;
}

/** The position and reason of the error JSON.parse threw for `text`. */
export function jsonErrorPosition(text: string, error: Error): JsonErrorPosition {
  return { ...positionOf(text, jsonErrorOffset(text)), detail: jsonErrorDetail(error.message) };
}

/** 1-based line and column of a character offset. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = 0; at < offset && at < text.length; at++) {
    if (text[at] === '\n') {
      line++;
      lineStart = at + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** The line where `"key":` first appears, for a message that points at it; 1 if it is not found. */
export function lineOfKey(text: string, key: string): number {
  const pattern = new RegExp(`${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`);
  const at = pattern.exec(text)?.index;
  return at === undefined ? 1 : positionOf(text, at).line;
}

/**
 * The line of the key at `path` in a JSON text that parses (`["roles", "writer", "model"]`:
 * that role's model, not the first `"model":` of the file), else lineOfKey's guess for its
 * last key. Array elements are named by their index.
 */
export function lineOfPath(text: string, path: readonly string[]): number {
  let at = 0;
  const space = () => {
    while (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r') at++;
  };
  const string = (): string => {
    const start = at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  // The offset of the key at path[depth..] inside the value at `at`, or undefined; `depth` < 0: not on the path.
  const value = (depth: number): number | undefined => {
    space();
    const char = text[at];
    if (char === '"') {
      string();
      return undefined;
    }
    if (char !== '{' && char !== '[') {
      while (at < text.length && !',]}'.includes(text[at]!)) at++;
      return undefined;
    }
    at++;
    let found: number | undefined;
    for (let index = 0; ; index++) {
      space();
      if (text[at] === '}' || text[at] === ']' || at >= text.length) break;
      let name = String(index);
      const keyAt = at;
      if (char === '{') {
        name = string();
        space();
        at++; // the colon
      }
      const onPath = depth >= 0 && name === path[depth];
      if (onPath && depth === path.length - 1 && char === '{') found ??= keyAt;
      const inner = value(onPath ? depth + 1 : -1);
      found ??= inner;
      space();
      if (text[at] === ',') at++;
    }
    at++;
    return found;
  };
  try {
    const offset = path.length === 0 ? undefined : value(0);
    if (offset !== undefined) return positionOf(text, offset).line;
  } catch {
    // Not JSON after all: the guess below.
  }
  return path.length === 0 ? 1 : lineOfKey(text, path.at(-1)!);
}

/**
 * V8's message without the parts that vary by Node version (the position, the quoted
 * text), on one line: a token it names may be a line break.
 */
function jsonErrorDetail(message: string): string {
  return message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/^Unexpected end of JSON input$/, 'unexpected end of the file')
    .replace(/\p{Cc}/gu, (char) => JSON.stringify(char).slice(1, -1));
}

/**
 * Offset of the first JSON syntax error in text (which JSON.parse refused). V8 says the
 * position for most errors but not all, and not the same way in every Node version, so the
 * text is scanned here: a plain recursive descent over RFC 8259.
 */
export function jsonErrorOffset(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw new JsonSyntaxAt(at);
  };
  const space = () => {
    while (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r') at++;
  };
  const string = () => {
    at++; // the opening quote
    for (;;) {
      const char = text[at];
      if (char === undefined || char < ' ') fail();
      if (char === '"') {
        at++;
        return;
      }
      if (char === '\\') {
        const escape = text[at + 1];
        if (escape !== undefined && '"\\/bfnrt'.includes(escape)) at += 2;
        else if (escape === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(at + 2, at + 6))) at += 6;
        else {
          at++;
          fail();
        }
      } else at++;
    }
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      at++;
      space();
      if (text[at] === close) {
        at++;
        return;
      }
      for (;;) {
        if (char === '{') {
          space();
          if (text[at] !== '"') fail();
          string();
          space();
          if (text[at] !== ':') fail();
          at++;
        }
        value();
        space();
        if (text[at] === ',') at++;
        else if (text[at] === close) {
          at++;
          return;
        } else fail();
      }
    }
    if (char === '"') return string();
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = at;
    if (number.test(text)) {
      at = number.lastIndex;
      return;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return;
      }
    }
    fail();
  };
  try {
    value();
    space();
    if (at < text.length) fail();
  } catch (error) {
    if (error instanceof JsonSyntaxAt) return error.offset;
    if (error instanceof RangeError) return at; // nested too deep to scan
    throw error;
  }
  return text.length;
}

class JsonSyntaxAt extends Error {
  constructor(readonly offset: number) {
    super(`JSON syntax error at ${offset}`);
  }
}
