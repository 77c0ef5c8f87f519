import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { kNeverAborted } from '../../src/executors/never-aborted.js';

const kSrc = join(import.meta.dirname, '../../src');

test('the signal that never aborts is not aborted and takes no reason', () => {
  expect(kNeverAborted.aborted).toBe(false);
  expect(kNeverAborted.reason).toBeUndefined();
});

test('it is defined once in src/: the worker and the attempt runner import it', () => {
  const files = readdirSync(kSrc, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));
  const defining = files.filter((name) => /\bkNeverAborted\s*(:[^=]+)?=/.test(readFileSync(join(kSrc, name), 'utf8')));
  expect(defining).toEqual(['executors/never-aborted.ts']);
  const using = files.filter((name) => /import \{ kNeverAborted \}/.test(readFileSync(join(kSrc, name), 'utf8'))).sort();
  expect(using).toEqual(['engine/task-runner.ts', 'executors/worker.ts']);
});
