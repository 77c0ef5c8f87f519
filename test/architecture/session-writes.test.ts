import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const kSrc = join(import.meta.dirname, '../../src');

/**
 * The folders that write the session folder: the session layer (its writer, lock, journal,
 * tasks writer), files/ (the write primitives and path checks it is built from) and csv/
 * (tasks.csv, which may live outside the folder). Any other code, knowledge/ included, is
 * handed a writer from above (layout.ts's SessionFileWriter) and never writes the folder.
 */
const kWriters: readonly string[] = ['session', 'files', 'csv'];

/** What writes a file: node:fs's writes, and files/'s helpers that write into the session. */
const kWriteNames: readonly string[] = [
  'writeFileSync',
  'appendFileSync',
  'createWriteStream',
  'writeWholeFile',
  'writeFileAtomic',
  'writeAll',
  'sessionPathForWrite',
];

/**
 * Files outside kWriters that still write the session folder themselves, each to be
 * routed through the session writer, never added to. The test fails when one is gone, so
 * that the list only shrinks.
 */
const kExceptions: readonly { file: string; why: string }[] = [
  { file: 'commands/init-session.ts', why: 'init makes the folder and its session.json before there is a session to open' },
  { file: 'report/write-report.ts', why: 'report.html goes through a temporary of its own in .csv-wave/ and a rename, or to --out anywhere' },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files of src/ outside kWriters that import something of kWriteNames, with the names. */
function directWriters(): { file: string; names: string[] }[] {
  return sourceFiles(kSrc).flatMap((path) => {
    const file = relative(kSrc, path).split(sep).join('/');
    if (kWriters.includes(file.split('/')[0]!)) return [];
    const code = readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const imported = [...code.matchAll(/\bimport\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'[^']+'/g)].flatMap((match) =>
      match[1]!.split(',').map((name) => name.trim().split(/\s+as\s+/)[0]!.replace(/^type\s+/, '')),
    );
    const names = imported.filter((name) => kWriteNames.includes(name));
    return names.length > 0 ? [{ file, names }] : [];
  });
}

describe('the writes of the session folder', () => {
  const found = directWriters();

  it('finds the writers it allows', () => {
    expect(found.map(({ file }) => file)).toContain('report/write-report.ts');
  });

  it('go through the session layer, but for the listed exceptions', () => {
    const direct = found.filter(({ file }) => !kExceptions.some((exception) => exception.file === file));
    expect(
      direct.map(({ file, names }) => `${file} imports ${names.join(', ')}`),
      'a file that writes the session folder itself (take a SessionFileWriter from above instead)',
    ).toEqual([]);
  });

  it('lists no exception that is gone', () => {
    const stale = kExceptions.filter(({ file }) => !found.some((writer) => writer.file === file));
    expect(stale, 'remove it from kExceptions').toEqual([]);
  });
});
