import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const kSrc = join(import.meta.dirname, '../../src');

/**
 * The layers of src/, from the bottom up. A folder (or a file at the top of src/) may
 * import its own files and anything in a layer below its own: never its own layer's other
 * members, never a layer above. Each layer is what the ones above it are built from:
 *
 * - the leaves: the error class, the version, the session folder's layout, text helpers,
 *   process utilities;
 * - files (writing a file whole or by a rename, and the paths a session may write);
 * - the options table (every run option's type, bounds, default and doc line);
 * - schema (zod), roles (what a pipeline asks of its roles' results), graph, core (the pure
 *   scheduling core), csv (tasks.csv and wave files);
 * - knowledge (a task's files: artifacts, discoveries, usage), executors (one attempt),
 *   interactive (the lane run in the main thread), pipelines (what makes brainstorm,
 *   analyze, generic and lifecycle differ), dynamic (what a task's result changes at run
 *   time: artifact gates and fix rounds, injected roles), backend (where attempts run),
 *   options (run options);
 * - events (the public events), session (the folder, its lock and journal), cache (the
 *   result cache: input keys, entries, when a run uses them, stale tasks), commands (init,
 *   validate, plan, status, rerun, revise as functions), run (one run);
 * - report (report.html, the live server), cli, and index.ts, the public API.
 */
const kLayers: readonly (readonly string[])[] = [
  ['errors.ts', 'version.ts', 'layout.ts', 'text', 'process'],
  ['files'],
  ['option-table.ts'],
  ['schema'],
  ['roles'],
  ['graph'],
  ['core'],
  ['csv'],
  ['knowledge'],
  ['executors'],
  ['interactive'],
  ['pipelines'],
  ['dynamic'],
  ['backend'],
  ['options'],
  ['events'],
  ['session'],
  ['cache'],
  ['commands'],
  ['run'],
  ['report'],
  ['cli'],
  ['index.ts'],
];

interface Import {
  /** The importing file, relative to src/. */
  file: string;
  /** The import's specifier as written. */
  specifier: string;
  /** The layer member (top folder or top file of src/) it reaches. */
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder under src/ a path is in, or the file's own name for a file at the top of src/. */
function memberOf(path: string): string {
  return relative(kSrc, path).split(sep)[0]!;
}

/** Every relative import of src/: static, re-exports, side-effect and dynamic. */
function relativeImports(): Import[] {
  return sourceFiles(kSrc).flatMap((path) => {
    // Comments may show an import; only code counts.
    const code = readFileSync(path, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    const specifiers = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+)'/g)].map((match) => match[1]!);
    return specifiers.map((specifier) => ({
      file: relative(kSrc, path).split(sep).join('/'),
      specifier,
      // A top file is imported by its compiled name (errors.js is src/errors.ts).
      to: memberOf(resolve(dirname(path), specifier)).replace(/\.js$/, '.ts'),
    }));
  });
}

const kRank = new Map(kLayers.flatMap((members, rank) => members.map((member) => [member, rank] as const)));

function upward(imports: Import[]): Import[] {
  return imports.filter(({ file, to }) => {
    const from = memberOf(join(kSrc, file));
    return from !== to && !(kRank.get(to)! < kRank.get(from)!);
  });
}

describe('the layers of src/', () => {
  const imports = relativeImports();

  it('finds the imports', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports).toContainEqual({ file: 'run/session-run.ts', specifier: '../session/journal.js', to: 'session' });
  });

  it('places every folder and top file of src/ in a layer', () => {
    const members = readdirSync(kSrc).filter((name) => !name.endsWith('.d.ts'));
    expect(members.filter((member) => !kRank.has(member)), 'add it to kLayers in this test').toEqual([]);
  });

  it('has imports that point down only', () => {
    const found = upward(imports).map(({ file, specifier }) => `${file} imports ${specifier}`);
    expect(found, 'an import that points up the layers of kLayers (move the code down, or pass it in from above)').toEqual([]);
  });
});

/** A folder of more files than this is split by what they hold (bullmq/ into redis/, trust/, jobs/, session/). */
const kMaxFilesPerFolder = 15;

describe('the folders of src/', () => {
  it(`hold at most ${kMaxFilesPerFolder} files each`, () => {
    const folders = (dir: string): string[] => [
      dir,
      ...readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? folders(join(dir, entry.name)) : [])),
    ];
    const crowded = folders(kSrc)
      .filter((dir) => dir !== kSrc)
      .map((dir) => ({ folder: relative(kSrc, dir), files: readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile()).length }))
      .filter(({ files }) => files > kMaxFilesPerFolder);
    expect(crowded, 'split the folder by what its files hold').toEqual([]);
  });
});
