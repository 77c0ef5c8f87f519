/**
 * Points imports at the module a name moved to, after a file of src/ was split.
 *
 *   npx tsx scripts/codemod/move-imports.ts OLD NAME,NAME…=NEW [NAME,…=NEW …]
 *
 * OLD and NEW are paths from the repository root (`src/csv/tasks-file.ts`). Every
 * `import {…} from '…'` and `export {…} from '…'` in src/, test/ and scripts/ that names
 * OLD (by a relative `.js` specifier) is rewritten: each name goes to the module the map
 * gives it, in one statement per module, `type` kept. A name the map does not give stays
 * with OLD while OLD exists; when OLD is gone, such a name is an error.
 *
 * Why a script: other branches add files importing from OLD while the split is under way;
 * after merging them, running the same command again points those at the new modules.
 * It is idempotent (a second run changes nothing). Nothing is written when any file has a
 * problem (an unmapped name of a deleted module, `import * as`, a default import, an
 * `export *` of a deleted module): the problems are listed, file and line, to be fixed by
 * hand. An `export *` of a module that still exists is left as it is, with a warning.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folders searched for importers, from the repository root. */
const kRoots = ['src', 'test', 'scripts'];

/** Files that may import a module of src/. */
const kSourceFile = /\.(?:ts|mts|cts|tsx)$/;

/** One named binding of an import or export statement. */
interface Binding {
  /** As written between the braces, without `type`: `parseTasks`, `kA as kB`. */
  text: string;
  /** The exported name it refers to: `kA` in `kA as kB`. */
  name: string;
  type: boolean;
}

export interface MoveMap {
  /** Absolute path of the module the names left, `.ts`. */
  oldModule: string;
  /** Whether the old module still exists (names the map does not give stay there). */
  oldExists: boolean;
  /** Exported name → absolute path of its new module, `.ts`. */
  targets: ReadonlyMap<string, string>;
}

export interface Rewrite {
  text: string;
  /** What stops the rewrite: fix these by hand, then run again. */
  problems: string[];
  /** What a person should look at, without stopping the rewrite. */
  warnings: string[];
}

/** `import`/`export`, `type`?, `{…}` or something else, `from`, the quoted specifier. */
const kStatement = /^([ \t]*)(import|export)(\s+type)?\s+([^;'"]*?)\s+from\s+(['"])(\.{1,2}\/[^'"]*)\5[ \t]*;?/gm;

/** The source with every statement naming `map.oldModule` pointed at the new modules. */
export function moveImports(source: string, file: string, map: MoveMap): Rewrite {
  const problems: string[] = [];
  const warnings: string[] = [];
  const joined = new Set<string>();
  const moved = source.replace(kStatement, (whole, indent: string, keyword: string, statementType: string | undefined, clause: string, _q: string, specifier: string, offset: number) => {
    if (resolveSpecifier(file, specifier) !== map.oldModule) return whole;
    const where = `${file}:${lineAt(source, offset)}`;
    const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
    if (braces === null) {
      // `export * from OLD` still holds while OLD exists; it just re-exports fewer names.
      if (keyword === 'export' && clause.trim() === '*' && map.oldExists) {
        warnings.push(`${where}: \`export *\` of the old module no longer re-exports the moved names`);
      } else problems.push(`${where}: \`${keyword} ${clause.trim()}\` names no bindings one by one: rewrite it by hand`);
      return whole;
    }
    const groups = new Map<string, Binding[]>();
    for (const binding of parseBindings(braces[1]!, statementType !== undefined)) {
      const target = map.targets.get(binding.name) ?? (map.oldExists ? map.oldModule : undefined);
      if (target === undefined) {
        problems.push(`${where}: ${binding.name} is not given a new module, and ${map.oldModule} is gone`);
        return whole;
      }
      const group = groups.get(target) ?? [];
      group.push(binding);
      groups.set(target, group);
    }
    if (groups.size === 1 && groups.has(map.oldModule)) return whole; // nothing it names moved
    for (const target of groups.keys()) joined.add(target);
    const statements = [...groups].map(([target, bindings]) => statement(indent, keyword, bindings, specifierFor(file, target)));
    return statements.join('\n');
  });
  return { text: mergeImports(moved, file, joined), problems, warnings };
}

/**
 * The file with its `import {…}` statements of each of `modules` merged into the first one:
 * a moved name may go to a module the file already imports from.
 */
function mergeImports(text: string, file: string, modules: ReadonlySet<string>): string {
  const byModule = new Map<string, { start: number; end: number; indent: string; specifier: string; bindings: Binding[] }[]>();
  for (const match of text.matchAll(kStatement)) {
    const [whole, indent, keyword, statementType, clause, , specifier] = match;
    const braces = /^\{([\s\S]*)\}$/.exec(clause!.trim());
    const module = resolveSpecifier(file, specifier!);
    if (keyword !== 'import' || braces === null || !modules.has(module)) continue;
    const found = byModule.get(module) ?? [];
    const start = match.index;
    found.push({ start, end: start + whole.length, indent: indent!, specifier: specifier!, bindings: parseBindings(braces[1]!, statementType !== undefined) });
    byModule.set(module, found);
  }
  const edits: { start: number; end: number; replacement: string }[] = [];
  for (const [first, ...rest] of byModule.values()) {
    if (first === undefined || rest.length === 0) continue;
    const bindings = new Map<string, Binding>();
    for (const binding of [first, ...rest].flatMap((s) => s.bindings)) {
      const seen = bindings.get(binding.text);
      bindings.set(binding.text, { ...binding, type: binding.type && (seen?.type ?? true) });
    }
    edits.push({ start: first.start, end: first.end, replacement: statement(first.indent, 'import', [...bindings.values()], first.specifier) });
    for (const { start, end } of rest) edits.push({ start, end: text[end] === '\n' ? end + 1 : end, replacement: '' });
  }
  let merged = text;
  for (const { start, end, replacement } of edits.sort((a, b) => b.start - a.start)) {
    merged = merged.slice(0, start) + replacement + merged.slice(end);
  }
  return merged;
}

function parseBindings(list: string, statementType: boolean): Binding[] {
  const bindings: Binding[] = [];
  for (const raw of list.split(',')) {
    const part = raw.replace(/\/\/.*$/gm, '').trim();
    if (part === '') continue;
    const typed = /^type\s+/.exec(part);
    const text = typed === null ? part : part.slice(typed[0].length);
    bindings.push({ text, name: text.split(/\s+as\s+/)[0]!.trim(), type: statementType || typed !== null });
  }
  return bindings;
}

/** One statement, `import type` when every binding is a type (`import { type A }` would stay at run time). */
function statement(indent: string, keyword: string, bindings: readonly Binding[], specifier: string): string {
  const allTypes = bindings.every((b) => b.type);
  const names = bindings.map((b) => (b.type && !allTypes ? `type ${b.text}` : b.text));
  const head = `${indent}${keyword}${allTypes ? ' type' : ''} `;
  const tail = ` from '${specifier}';`;
  const oneLine = `${head}{ ${names.join(', ')} }${tail}`;
  if (oneLine.length <= 120) return oneLine;
  return `${head}{\n${names.map((n) => `${indent}  ${n},\n`).join('')}${indent}}${tail}`;
}

/** The `.ts` file a relative `.js` specifier names. */
function resolveSpecifier(file: string, specifier: string): string {
  return resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
}

function specifierFor(file: string, target: string): string {
  const path = relative(dirname(file), target).split(sep).join('/').replace(/\.ts$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let at = 0; at < offset; at++) if (text.charCodeAt(at) === 10) line++;
  return line;
}

function* sourceFiles(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist' || entry === 'fixtures') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (kSourceFile.test(entry)) yield path;
  }
}

/** Parses `NAME,NAME=NEW` arguments; throws on a malformed one or a name given twice. */
export function parseTargets(root: string, args: readonly string[]): Map<string, string> {
  const targets = new Map<string, string>();
  for (const arg of args) {
    const match = /^([\w$,\s]+)=(.+\.ts)$/.exec(arg);
    if (match === null) throw new Error(`Expected NAME,NAME…=path/of/new-module.ts, got ${JSON.stringify(arg)}`);
    for (const name of match[1]!.split(',').map((n) => n.trim()).filter((n) => n !== '')) {
      if (targets.has(name)) throw new Error(`${name} is given two new modules`);
      targets.set(name, resolve(root, match[2]!));
    }
  }
  return targets;
}

function main(argv: readonly string[]): number {
  const [old, ...pairs] = argv;
  if (old === undefined || pairs.length === 0) {
    console.error('Usage: npx tsx scripts/codemod/move-imports.ts OLD NAME,NAME…=NEW [NAME,…=NEW …]');
    return 2;
  }
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const oldModule = resolve(root, old);
  const map: MoveMap = { oldModule, oldExists: existsSync(oldModule), targets: parseTargets(root, pairs) };
  for (const target of new Set(map.targets.values())) {
    if (!existsSync(target)) console.error(`warning: ${relative(root, target)} does not exist`);
  }
  const changed: { path: string; text: string }[] = [];
  const problems: string[] = [];
  for (const path of kRoots.flatMap((dir) => [...sourceFiles(join(root, dir))])) {
    const source = readFileSync(path, 'utf8');
    const rewrite = moveImports(source, path, map);
    problems.push(...rewrite.problems.map((problem) => problem.replace(path, relative(root, path))));
    for (const warning of rewrite.warnings) console.error(`warning: ${warning.replace(path, relative(root, path))}`);
    if (rewrite.text !== source) changed.push({ path, text: rewrite.text });
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`Nothing written: ${problems.length} problem(s) to fix by hand first.`);
    return 1;
  }
  for (const { path, text } of changed) writeFileSync(path, text);
  console.log(`${changed.length} file(s) rewritten${changed.map(({ path }) => `\n  ${relative(root, path)}`).join('')}`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
