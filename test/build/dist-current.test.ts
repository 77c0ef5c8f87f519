import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const kSrc = fileURLToPath(new URL('../../src/', import.meta.url));
const kDist = fileURLToPath(new URL('../../dist/', import.meta.url));

/** Each .ts file under src/, as a path relative to src/. */
function sources(): string[] {
  return readdirSync(kSrc, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'));
}

describe('dist/, which the CLI tests spawn and piscina runs as the worker thread', () => {
  // vitest's global setup (test/helpers/build-dist.ts) builds it; without that, a file of
  // src/ edited since the last build would be tested as it was before the edit.
  test('holds a .js file for every file of src/, written after that file last changed', () => {
    const names = sources();
    expect(names).toContain(join('executors', 'worker.ts'));
    const stale = names.filter((name) => {
      const built = join(kDist, name.replace(/\.ts$/, '.js'));
      return !existsSync(built) || statSync(built).mtimeMs < statSync(join(kSrc, name)).mtimeMs;
    });
    expect(stale, 'missing or older than their source in dist/ (`npm run build` makes them)').toEqual([]);
  });
});
