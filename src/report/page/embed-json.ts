/**
 * JSON for a `<script type="application/json">` element: `<`, `>` and `&` are escaped so
 * that no cell can close the element (`</script>`) or open a comment, and U+2028/U+2029
 * so that the text stays valid in any JavaScript context. JSON.parse reads it back unchanged.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
