/**
 * JSON for a `<script type="application/json">` element: `<`, `>` and `&` are escaped so
 * that no cell can close the element (`</script>`) or open a comment, and U+2028/U+2029
 * so that the text stays valid in any JavaScript context. JSON.parse reads it back unchanged.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Items (array elements or object entries) made into text at a time by embedJsonParts. */
const kItemsPerPart = 2000;

/**
 * The text of `embedJson(value)` in pieces, their concatenation equal to it byte for byte.
 * A long array (the tasks of a million-task session) or an object of many keys is made into
 * text some thousand items at a time, and the objects and short arrays that hold them key
 * by key: so no piece is much bigger than a thousand tasks' text, and a writer can send each
 * on before the next is made, never holding the whole page as one string.
 */
export function* embedJsonParts(value: unknown): Generator<string> {
  if (typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    yield embedJson(value);
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    if (value.length > kItemsPerPart) {
      // Elements of a long array are small (a task, an attempt): made into text many at a time.
      for (let from = 0; from < value.length; from += kItemsPerPart) {
        const text = embedJson(value.slice(from, from + kItemsPerPart));
        yield `${from === 0 ? '' : ','}${text.slice(1, -1)}`;
      }
    } else {
      for (let index = 0; index < value.length; index++) {
        if (index > 0) yield ',';
        // JSON.stringify writes null for what it cannot write in an array.
        yield* representable(value[index]) ? embedJsonParts(value[index]) : ['null'];
      }
    }
    yield ']';
    return;
  }
  // JSON.stringify leaves out a key whose value it cannot write (undefined, a function).
  const keys = Object.keys(value).filter((key) => representable((value as Record<string, unknown>)[key]));
  yield '{';
  if (keys.length > kItemsPerPart) {
    for (let from = 0; from < keys.length; from += kItemsPerPart) {
      const slice: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const key of keys.slice(from, from + kItemsPerPart)) slice[key] = (value as Record<string, unknown>)[key];
      yield `${from === 0 ? '' : ','}${embedJson(slice).slice(1, -1)}`;
    }
  } else {
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      yield `${index > 0 ? ',' : ''}${embedJson(key)}:`;
      yield* embedJsonParts((value as Record<string, unknown>)[key]);
    }
  }
  yield '}';
}

/** Whether JSON.stringify writes this value (not undefined, a function or a symbol). */
function representable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}
