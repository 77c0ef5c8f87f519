import { describe, expect, test } from 'vitest';
import { moveImports, parseTargets, type MoveMap } from '../../scripts/codemod/move-imports.js';

const kRoot = '/repo';
const map = (oldExists: boolean): MoveMap => ({
  oldModule: '/repo/src/csv/old.ts',
  oldExists,
  targets: parseTargets(kRoot, ['parseA,kLimit=src/csv/parse-a.ts', 'Row,emptyRow=src/core/task.ts']),
});

describe('moveImports', () => {
  test('splits a statement by new module, keeps `type` and aliases, and paths are relative to the importer', () => {
    const source = [
      "import { readFileSync } from 'node:fs';",
      "import { emptyRow, parseA as parse, type Row } from '../csv/old.js';",
      'const x = 1;',
      '',
    ].join('\n');
    const { text, problems } = moveImports(source, '/repo/src/engine/load.ts', map(false));
    expect(problems).toEqual([]);
    expect(text).toBe(
      [
        "import { readFileSync } from 'node:fs';",
        "import { emptyRow, type Row } from '../core/task.js';",
        "import { parseA as parse } from '../csv/parse-a.js';",
        'const x = 1;',
        '',
      ].join('\n'),
    );
  });

  test('an import of types only stays `import type`, multi-line statements and re-exports included', () => {
    const source = "export type {\n  Row,\n} from './old.js';\nimport {\n  type Row as R,\n  kLimit,\n} from './old.js';\n";
    const { text } = moveImports(source, '/repo/src/csv/index.ts', map(false));
    expect(text).toBe("export type { Row } from '../core/task.js';\nimport type { Row as R } from '../core/task.js';\nimport { kLimit } from './parse-a.js';\n");
  });

  test('a moved name joins the import the file already has of its new module; a statement naming nothing moved is kept as written', () => {
    const source = [
      "import { kLimit as kMax } from './parse-a.js';",
      "import { cellOf, formatCountWithAVeryLongNameSoThatTheLineWouldBeReformattedIfItWereRewritten } from './old.js';",
      "import { parseA, type Row } from './old.js';",
      "import type { Row as R2 } from '../core/task.js';",
      '',
    ].join('\n');
    const { text } = moveImports(source, '/repo/src/csv/a.ts', map(true));
    expect(text).toBe(
      [
        "import { kLimit as kMax, parseA } from './parse-a.js';",
        "import { cellOf, formatCountWithAVeryLongNameSoThatTheLineWouldBeReformattedIfItWereRewritten } from './old.js';",
        "import type { Row, Row as R2 } from '../core/task.js';",
        '',
      ].join('\n'),
    );
  });

  test('other modules are left alone, and a second run changes nothing', () => {
    const source = "import { parseA } from '../../src/csv/old.js';\nimport { parseA as b } from '../../src/csv/older.js';\n";
    const once = moveImports(source, '/repo/test/csv/a.test.ts', map(false)).text;
    expect(once).toBe("import { parseA } from '../../src/csv/parse-a.js';\nimport { parseA as b } from '../../src/csv/older.js';\n");
    expect(moveImports(once, '/repo/test/csv/a.test.ts', map(false)).text).toBe(once);
  });

  test('a name the map does not give stays with the old module while it exists, and is a problem once it is gone', () => {
    const source = "import { cellOf, type Row } from './old.js';\n";
    expect(moveImports(source, '/repo/src/csv/a.ts', map(true)).text).toBe(
      "import { cellOf } from './old.js';\nimport type { Row } from '../core/task.js';\n",
    );
    const gone = moveImports(source, '/repo/src/csv/a.ts', map(false));
    expect(gone.text).toBe(source);
    expect(gone.problems).toEqual(['/repo/src/csv/a.ts:1: cellOf is not given a new module, and /repo/src/csv/old.ts is gone']);
  });

  test('namespace imports of the old module are reported, not guessed; `export *` too once the old module is gone', () => {
    const source = "const a = 1;\nexport * from './old.js';\nimport * as old from './old.js';\n";
    const gone = moveImports(source, '/repo/src/csv/index.ts', map(false));
    expect(gone.text).toBe(source);
    expect(gone.problems.map((p) => p.split(': ')[0])).toEqual(['/repo/src/csv/index.ts:2', '/repo/src/csv/index.ts:3']);
    const kept = moveImports(source, '/repo/src/csv/index.ts', map(true));
    expect(kept.problems.map((p) => p.split(': ')[0])).toEqual(['/repo/src/csv/index.ts:3']);
    expect(kept.warnings.map((p) => p.split(': ')[0])).toEqual(['/repo/src/csv/index.ts:2']);
  });
});

describe('parseTargets', () => {
  test('refuses a name given two modules and a malformed pair', () => {
    expect(() => parseTargets(kRoot, ['a=src/x.ts', 'a=src/y.ts'])).toThrow('a is given two new modules');
    expect(() => parseTargets(kRoot, ['a:src/x.ts'])).toThrow('Expected NAME,NAME…=path/of/new-module.ts');
  });
});
