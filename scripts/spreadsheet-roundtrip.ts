/**
 * Opens a finished tasks.csv in LibreOffice Calc (headless), saves it back as CSV, and runs
 * `validate`, `status` and `rerun --failed` on the result: is anything misread? Records
 * what Calc changed in RELIABILITY.md between `<!-- reliability:spreadsheet -->` markers.
 *
 *   npx tsc -p tsconfig.json      # the commands run dist/cli/bin.js
 *   npx tsx scripts/spreadsheet-roundtrip.ts [--keep] [--no-write]
 *
 * Installs nothing: it needs `soffice` (Debian/Ubuntu: `apt-get install -y libreoffice-calc`).
 *
 * The finished session holds what a spreadsheet likes to change: ids with leading zeros,
 * in scientific notation, of 20 digits or 64 characters; findings that look like numbers,
 * dates, percentages or formulas (which csv-wave writes with a guarding apostrophe);
 * multi-line cells, quotes, commas, padding, non-ASCII; a UTF-8 BOM and CRLF line ends.
 * Calc opens it twice: with "Format quoted field as text" (what to tick in the import
 * dialog; csv-wave quotes every field it writes), and with Calc's defaults.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeReliabilitySection } from './reliability-md.js';

const kRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const kBin = join(kRoot, 'dist', 'cli', 'bin.js');
const kCmd = 'printf %s {description}';

const { values } = parseArgs({
  options: { keep: { type: 'boolean', default: false }, 'no-write': { type: 'boolean', default: false } },
});

const soffice = spawnSync('sh', ['-c', 'command -v soffice'], { encoding: 'utf8' }).stdout.trim();
if (soffice === '') {
  console.error('LibreOffice Calc (soffice) is not installed. On Debian or Ubuntu: apt-get install -y libreoffice-calc');
  process.exit(2);
}
if (!existsSync(kBin)) {
  console.error(`${kBin} is missing: build first with npx tsc -p tsconfig.json`);
  process.exit(2);
}
const sofficeVersion = spawnSync(soffice, ['--version'], { encoding: 'utf8' }).stdout.trim();

function cli(...argv: string[]): { code: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [kBin, ...argv], { encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

// ---------------------------------------------------------------------------------------
// A finished session with the cells spreadsheets misread.

const longId = `LONG-${'x'.repeat(59)}`;
const tasks: { id: string; title: string; result: Record<string, unknown>; deps?: string; notes?: string; priority?: string }[] = [
  { id: '007', title: 'Leading zeros', result: { findings: '007' }, notes: '0123' },
  { id: '1e5', title: 'Looks like a number', result: { findings: '1e5' } },
  { id: '12345678901234567890', title: 'Twenty digits', result: { findings: '12345678901234567890' } },
  { id: longId, title: 'A 64-character id', result: { findings: 'long id' }, deps: '007;1e5' },
  { id: '2024-01-02', title: 'Looks like a date', result: { findings: '2024-01-02' } },
  { id: 'formula', title: 'Formulas, guarded', result: { findings: '=HYPERLINK("http://example.com";"click")', gc_signal: '+1', severity_summary: '-5' } },
  { id: 'at', title: 'An at sign', result: { findings: '@here please' } },
  { id: 'numbers', title: 'Percent, fraction, decimals', result: { findings: '50%' }, notes: '1/2' },
  { id: 'decimal', title: 'Decimal comma, decimal point', result: { findings: '3.50' }, notes: '1,5' },
  { id: 'multi', title: 'Multi-line, "quotes", commas', result: { findings: 'line 1\nline 2, with a comma\n"quoted" line 3' }, deps: 'numbers' },
  { id: 'padded', title: 'Spaces around', result: { findings: '  padded  ' } },
  { id: 'unicode', title: 'Zürich — 東京 ✓', result: { findings: 'Zürich — 東京 ✓ — ½' }, priority: 'P0' },
  { id: 'fails', title: 'Fails', result: { status: 'failed', findings: '', error: "=cmd|' /C calc'!A0" } },
  { id: 'after-fail', title: 'Skipped after a failure', result: { findings: 'never' }, deps: 'fails' },
];

function quote(cell: string): string {
  return `"${cell.replace(/"/g, '""')}"`;
}

function makeSession(): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-spreadsheet-'));
  const header = 'id,title,description,role,deps,context_from,exec_mode,priority,notes';
  const lines = tasks.map((task) =>
    [task.id, task.title, JSON.stringify(task.result), 'worker', task.deps ?? '', '', 'csv-wave', task.priority ?? '', task.notes ?? '']
      .map(quote)
      .join(','),
  );
  // As a spreadsheet program on Windows saves it: a BOM and CRLF line ends.
  writeFileSync(join(dir, 'tasks.csv'), `\ufeff${[header, ...lines].join('\r\n')}\r\n`);
  writeFileSync(join(dir, 'session.json'), JSON.stringify({ pipeline: 'generic' }));
  const run = cli('run', dir, '--cmd', kCmd);
  if (run.code !== 1) throw new Error(`the first run should end with failures (exit 1), got ${run.code}: ${run.stderr}`);
  return dir;
}

// ---------------------------------------------------------------------------------------
// Calc's round trip.

interface Mode {
  name: string;
  what: string;
  /** --infilter for the CSV import, or none (Calc's defaults). */
  infilter?: string;
}

const kColumns = 'id,title,description,role,deps,context_from,exec_mode,priority,notes,wave,status,findings,gc_signal,severity_summary,error'.split(',').length;
const kModes: Mode[] = [
  {
    name: 'quoted fields as text',
    what: 'import with "Format quoted field as text" (token 7) and UTF-8; export with "Quote all text cells"',
    // Field separator, text delimiter, UTF-8, first line, column formats (none), language, quoted field as text, detect special numbers.
    infilter: 'CSV:44,34,76,1,,1033,true,false',
  },
  {
    name: 'every column as text',
    what: 'import with every column formatted as Text (token 5), as when a person marks all columns Text in the dialog',
    infilter: `CSV:44,34,76,1,${Array.from({ length: kColumns }, (_, i) => `${i + 1}/2`).join('/')},1033,false,false`,
  },
  { name: "Calc's defaults", what: 'open and save with no import options at all (`soffice --convert-to csv`)' },
];

function roundTrip(session: string, mode: Mode): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-calc-'));
  cpSync(session, dir, { recursive: true });
  const out = join(dir, 'calc-out');
  mkdirSync(out);
  // Export: separator, delimiter, UTF-8, first line, -, language, quote all text cells, -, save as shown: no (full precision).
  const exportFilter = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,true,true,false,false';
  const args = ['--headless', ...(mode.infilter ? [`--infilter=${mode.infilter}`] : []), '--convert-to', mode.infilter ? exportFilter : 'csv', '--outdir', out, join(dir, 'tasks.csv')];
  // A profile of its own, so that a Calc open elsewhere does not swallow the conversion.
  const profile = mkdtempSync(join(tmpdir(), 'csv-wave-lo-profile-'));
  const result = spawnSync(soffice, [`-env:UserInstallation=file://${profile}`, ...args], { encoding: 'utf8', timeout: 120_000 });
  rmSync(profile, { recursive: true, force: true });
  if (!existsSync(join(out, 'tasks.csv'))) throw new Error(`soffice wrote nothing: ${result.stderr}${result.stdout}`);
  copyFileSync(join(out, 'tasks.csv'), join(dir, 'tasks.csv'));
  rmSync(out, { recursive: true, force: true });
  return dir;
}

// ---------------------------------------------------------------------------------------
// What changed, and how csv-wave reads it.

interface FileShape {
  bom: boolean;
  lineEnds: string;
  quoting: string;
}

function shape(path: string): FileShape {
  const text = readFileSync(path, 'utf8');
  // The header line's end is the record separator; line breaks inside cells are counted apart.
  const headerEnd = /\r?\n/.exec(text)?.[0] ?? '';
  const inCells = (text.match(/\r?\n/g) ?? []).filter((end) => end !== headerEnd).length;
  const secondLine = text.replace(/^\ufeff/, '').split(/\r?\n/)[1] ?? '';
  return {
    bom: text.startsWith('\ufeff'),
    lineEnds: `${headerEnd === '\r\n' ? 'CRLF' : 'LF'}${inCells > 0 ? ` (${inCells} ${headerEnd === '\r\n' ? 'LF' : 'CRLF'} inside cells)` : ''}`,
    quoting: secondLine.startsWith('"') ? 'every text field quoted' : 'quoted only where needed',
  };
}

type Tasks = Record<string, string>[];

function statusJson(dir: string): { tasks: Tasks; counts: Record<string, number> } {
  const result = cli('status', dir, '--json');
  if (result.code !== 0) throw new Error(`status --json exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as { tasks: Tasks; counts: Record<string, number> };
}

/** Every cell that reads differently, as `id.column: before → after`. */
function differences(before: Tasks, after: Tasks): string[] {
  const found: string[] = [];
  if (before.length !== after.length) found.push(`${before.length} tasks before, ${after.length} after`);
  for (let i = 0; i < Math.min(before.length, after.length); i++) {
    const a = before[i]!;
    const b = after[i]!;
    for (const column of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if ((a[column] ?? '') !== (b[column] ?? '')) {
        found.push(`${a['id']}.${column}: ${JSON.stringify(a[column] ?? '')} → ${JSON.stringify(b[column] ?? '')}`);
      }
    }
  }
  return found;
}

interface ModeReport {
  mode: Mode;
  shape: FileShape;
  changedCells: string[];
  validate: string;
  status: string;
  rerun: string;
  misread: boolean;
}

function check(session: string, original: Tasks, mode: Mode): ModeReport {
  const dir = roundTrip(session, mode);
  const fileShape = shape(join(dir, 'tasks.csv'));
  const validated = cli('validate', dir);
  let changedCells: string[];
  let statusLine: string;
  try {
    const after = statusJson(dir);
    changedCells = differences(original, after.tasks);
    statusLine = `exit 0; counts ${JSON.stringify(after.counts)}`;
  } catch (error) {
    changedCells = [`status --json failed: ${(error as Error).message}`];
    statusLine = (error as Error).message;
  }
  // rerun --failed: exactly the failed task and the one skipped because of it run again.
  const expected = ['after-fail', 'fails'];
  const plan = cli('rerun', dir, '--failed', '--dry-run', '--json');
  let rerunLine: string;
  if (plan.code !== 0) {
    const said = cli('rerun', dir, '--failed', '--dry-run');
    rerunLine = `refused (exit ${plan.code}) before resetting anything: ${(said.stderr || said.stdout).trim().split('\n').join(' | ')}`;
  } else {
    const listed = JSON.parse(plan.stdout) as { chosen: string[]; cascaded: string[] };
    const reset = [...listed.chosen, ...listed.cascaded].sort();
    const rerun = cli('rerun', dir, '--failed', '--cmd', `echo {id} >> rerun.log; echo fixed`);
    const ran = existsSync(join(dir, 'rerun.log')) ? readFileSync(join(dir, 'rerun.log'), 'utf8').trim().split('\n').sort() : [];
    const afterRerun = statusJson(dir).tasks;
    const untouched = differences(
      original.filter((task) => !expected.includes(task['id']!)),
      afterRerun.filter((task) => !expected.includes(task['id']!)),
    );
    const ok = reset.join() === expected.join() && ran.join() === expected.join() && rerun.code === 0;
    rerunLine =
      `${ok ? 'reset and ran exactly' : 'reset'} ${reset.join(', ')}${ok ? '' : ` (ran ${ran.join(', ')})`}; exit ${rerun.code}` +
      (untouched.length === changedCells.length ? '; every other cell as before the rerun' : `; ${untouched.length} other cell(s) differ`);
  }
  const validateLine =
    validated.code === 0 ? validated.stdout.trim() : `exit ${validated.code}: ${(validated.stderr || validated.stdout).trim().split('\n').join(' | ')}`;
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
  // Messages name the temporary copy: shown as the session's own tasks.csv.
  const plain = (text: string) => text.split(`${dir}/`).join('');
  return {
    mode,
    shape: fileShape,
    changedCells,
    validate: plain(validateLine),
    status: statusLine,
    rerun: plain(rerunLine),
    misread: changedCells.length > 0 || validated.code !== 0,
  };
}

// ---------------------------------------------------------------------------------------

const session = makeSession();
const originalShape = shape(join(session, 'tasks.csv'));
const original = statusJson(session).tasks;
const reports = kModes.map((mode) => check(session, original, mode));
if (!values.keep) rmSync(session, { recursive: true, force: true });
else console.log(`kept ${session}`);

const lines: string[] = [
  '## Spreadsheets: a finished tasks.csv through LibreOffice Calc and back',
  '',
  `Measured ${new Date().toISOString().slice(0, 10)} with \`npx tsx scripts/spreadsheet-roundtrip.ts\` (${sofficeVersion}).`,
  `The finished tasks.csv (${tasks.length} tasks, csv-wave's own output: ${originalShape.bom ? 'UTF-8 BOM' : 'no BOM'}, ${originalShape.lineEnds}, ${originalShape.quoting})`,
  'holds ids `007`, `1e5`, `12345678901234567890`, `2024-01-02` and one of 64 characters; findings `007`, `1e5`, `50%`, `3.50`,',
  'a date, a 20-digit number, formulas and `+`/`-`/`@` cells (guarded by csv-wave with an apostrophe), multi-line cells with',
  'quotes and commas, padding, non-ASCII text, an extra column with `0123`, `1/2` and `1,5`, a failed task and one skipped after it.',
  '',
];
for (const report of reports) {
  lines.push(`**${report.mode.name}** (${report.mode.what}):`, '');
  lines.push(`- file: ${report.shape.bom ? 'BOM kept' : 'BOM dropped'}, ${report.shape.lineEnds} line ends, ${report.shape.quoting}`);
  lines.push(`- validate: ${report.validate}`);
  lines.push(`- status --json: ${report.status}; ${report.changedCells.length === 0 ? 'every cell reads exactly as before' : `${report.changedCells.length} cell(s) read differently:`}`);
  for (const change of report.changedCells.slice(0, 20)) lines.push(`  - \`${change}\``);
  const changedIds = new Set(report.changedCells.map((change) => change.slice(0, change.indexOf('.'))));
  const exact = tasks.map((task) => task.id).filter((id) => !changedIds.has(id));
  lines.push(`- tasks whose every cell reads back exactly: ${exact.map((id) => `\`${id === longId ? 'LONG-x…x (64 characters)' : id}\``).join(', ')}`);
  lines.push(`- rerun --failed: ${report.rerun}`);
  lines.push(`- verdict: ${report.misread ? 'Calc changed cells (csv-wave reads back what Calc wrote)' : 'nothing misread'}`);
  lines.push('');
}
const text = lines.join('\n');
console.log(text);
if (!values['no-write']) {
  writeReliabilitySection('spreadsheet', text);
  console.log('RELIABILITY.md updated (section reliability:spreadsheet)');
}
process.exitCode = reports[0]!.misread ? 1 : 0;
