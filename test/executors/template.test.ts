import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { renderCommand, shellQuote, templateProblems } from '../../src/executors/template.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { propertyTest } from '../helpers/property-runs.js';

/** What /bin/sh prints for a rendered command, as bytes. */
function shellOutput(command: string, cwd?: string): Buffer {
  const result = spawnSync('/bin/sh', ['-c', command], { cwd, encoding: 'buffer' });
  expect(result.status).toBe(0);
  return result.stdout;
}

describe('renderCommand', () => {
  test('replaces each {column} with the single-quoted cell', () => {
    expect(renderCommand('run {id} --title {title}', { id: 'A-1', title: 'two words' })).toBe(
      "run 'A-1' --title 'two words'",
    );
  });

  test('a single quote in a cell closes, escapes and reopens the quoting', () => {
    expect(renderCommand('echo {title}', { title: "it's" })).toBe(`echo 'it'\\''s'`);
    expect(shellQuote("'")).toBe(`''\\'''`);
    expect(shellQuote('')).toBe("''");
  });

  test('an empty cell is an empty argument, not a missing one', () => {
    expect(renderCommand('cmd {a} {b}', { a: '', b: 'x' })).toBe("cmd '' 'x'");
  });

  test('column names with dots, dashes and underscores are placeholders too', () => {
    expect(renderCommand('{my-col} {a.b} {_x}', { 'my-col': '1', 'a.b': '2', _x: '3' })).toBe("'1' '2' '3'");
  });

  test('{{ and }} are literal braces', () => {
    expect(renderCommand('{{id}}', { id: 'A' })).toBe('{id}');
    expect(renderCommand('{{{id}}}', { id: 'A' })).toBe("{'A'}");
    expect(renderCommand("awk '{{print $1}}'", {})).toBe("awk '{print $1}'");
    expect(renderCommand('echo }}}', {})).toBe('echo }}');
  });

  test('unknown names and text that is not a placeholder stay as written', () => {
    expect(renderCommand('{nope} {id}', { id: 'A' })).toBe("{nope} 'A'");
    expect(renderCommand("awk '{print}' {}", {})).toBe("awk '{print}' {}");
    expect(renderCommand('{ id } {1id} {id', { id: 'A' })).toBe('{ id } {1id} {id');
    expect(renderCommand('x=${HOME}', { id: 'A' })).toBe('x=${HOME}');
  });

  test("names of Object.prototype members are not columns unless the row has them", () => {
    expect(renderCommand('{constructor} {toString} {__proto__}', {})).toBe('{constructor} {toString} {__proto__}');
  });

  test('a value that looks like a placeholder is not rendered again', () => {
    expect(renderCommand('{a} {b}', { a: '{b}', b: 'B' })).toBe("'{b}' 'B'");
  });
});

describe('placeholders inside the template\'s own quotes', () => {
  test('"{file}" is filled inside the double quotes, escaping what they would expand', () => {
    expect(renderCommand('cat "{file}"', { file: 'my file.txt' })).toBe('cat "my file.txt"');
    expect(renderCommand('echo "{a}"', { a: '$(x) `y` "z" \\' })).toBe('echo "\\$(x) \\`y\\` \\"z\\" \\\\"');
  });

  test("'{file}' is filled inside the single quotes, closing and reopening them around a quote", () => {
    expect(renderCommand("cat '{file}'", { file: "it's" })).toBe("cat 'it'\\''s'");
  });

  test('an escaped quote does not open quotes; $(...) inside double quotes is quoted afresh', () => {
    expect(renderCommand('echo \\"{a}', { a: 'x y' })).toBe("echo \\\"'x y'");
    expect(renderCommand('echo "$(cat {a})"', { a: 'x y' })).toBe(`echo "$(cat 'x y')"`);
  });

  test('backquotes, comments and here-documents are refused for known columns, with the fix', () => {
    expect(templateProblems('echo `cat {file}`', ['file'])).toEqual([
      '{file} is inside backquotes, where a cell cannot be quoted safely: write $(...) instead of `...`',
    ]);
    expect(templateProblems('echo hi # {file}', ['file'])).toEqual([
      '{file} is in a shell comment, which a newline in the cell would end: take it out of the comment',
    ]);
    expect(templateProblems('cat <<EOF\n{file}\nEOF', ['file'])).toEqual([
      "{file} follows a here-document (<<), whose body runs $(...) in a cell: pipe the value instead, e.g. printf '%s\\n' {file} | cmd",
    ]);
    // The `)` of a case pattern does not close the $(...): what follows could be misread.
    const unsure =
      '{file} follows a case statement inside $(...), after which csv-wave cannot tell how to quote it: move the case into a script, or the placeholder before it';
    expect(templateProblems('echo "$(case {file} in a) echo b;; esac) {file}"', ['file'])).toEqual([unsure, unsure]);
    // Not columns: they stay as written, wherever they are.
    expect(templateProblems('echo `cat {nope}` # {nope}', ['file'])).toEqual([]);
    // A # inside a word, or quoted, is no comment.
    expect(templateProblems('echo a#{file} "#{file}"', ['file'])).toEqual([]);
  });

  test('a placeholder inside ${...} or $\'...\' is refused, with the fix', () => {
    const param =
      '{x} is inside ${...} (or after one holding quotes or commands), where shells quote differently: assign the cell to a variable first, e.g. x={x}; echo "${U:-$x}"';
    const ansic = "{x} is inside or after a $'...' string, which bash and dash end at different places: write '...' or \"...\" instead";
    // The reported templates: dash and bash read the inner quotes as nested ones.
    expect(templateProblems('echo "${U:-"{x}"}"', ['x'])).toEqual([param]);
    expect(templateProblems('echo "${U#"{x}"}"', ['x'])).toEqual([param]);
    // `${x}` would render as `$'cell'`, which bash reads with backslash escapes.
    expect(templateProblems('echo ${x} "${x}"', ['x'])).toEqual([param, param]);
    // After a ${...} that held quotes, where it ended is not sure either.
    expect(templateProblems('echo "${U:-"a"}" {x}', ['x'])).toEqual([param]);
    expect(templateProblems("echo $'{x}' {x}", ['x'])).toEqual([ansic, ansic]);
    // The fix the message shows is accepted, and so are plain ${...} and a quoted $'.
    expect(templateProblems('x={x}; echo "${U:-$x}"', ['x'])).toEqual([]);
    expect(templateProblems('echo ${HOME} {x} "${HOME}" "{x}" "$\'" {x} $${x}', ['x'])).toEqual([]);
    expect(renderCommand('echo ${HOME} {x} ${{x}}', { x: 'V' })).toBe("echo ${HOME} 'V' ${x}");
  });

  test('a template with a placeholder in ${...} is refused before any task starts (exit 2)', async () => {
    const dir = buildSession([{ id: 'A', description: 'd', role: 'r', file: 'x.txt' }]);
    const template = 'echo "${U:-"{file}"}" > ran.txt';
    const result = await runCli('run', dir, '--cmd', template);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `Command template ${JSON.stringify(template)}: ` +
        '{file} is inside ${...} (or after one holding quotes or commands), where shells quote differently: assign the cell to a variable first, e.g. x={file}; echo "${U:-$x}"\n',
    );
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false);
    expect(readRows(dir).get('A')!.status).toBe('');
  });

  test('through a whole run: cat "{file}" reads the file whose name has a space', async () => {
    const dir = buildSession([{ id: 'A', description: 'd', role: 'r', file: 'my file.txt' }]);
    writeFileSync(join(dir, 'my file.txt'), 'contents');
    const result = await runCli('run', dir, '--cmd', 'cat "{file}"');
    expect(result.code, result.stdout).toBe(0);
    expect(readRows(dir).get('A')!.findings).toBe('contents');
  });

  test('a template csv-wave cannot quote is refused before any task starts (exit 2), saying how to fix it', async () => {
    const dir = buildSession([{ id: 'A', description: 'd', role: 'r', file: 'x.txt' }]);
    const result = await runCli('run', dir, '--cmd', 'echo `cat {file}`');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'Command template "echo `cat {file}`": {file} is inside backquotes, where a cell cannot be quoted safely: write $(...) instead of `...`\n',
    );
    expect(readRows(dir).get('A')!.status).toBe('');
  });
});

describe('shell safety', () => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-template-'));
  const marker = join(dir, 'pwned');
  // Fragments a shell would act on, mixed with any code point. NUL is left out: it cannot be
  // part of an argv string (the kernel ends every argument at the first NUL), so no cell
  // holding one can reach a command as written, quoted or not.
  const hostile = fc.constantFrom(
    `$(touch ${marker})`,
    `\`touch ${marker}\``,
    `'; touch ${marker}; '`,
    `"; touch ${marker}; "`,
    `\n touch ${marker}\n`,
    "'",
    '"',
    '\\',
    "'\\''",
    '\n',
    '\r\n',
    '\t',
    '$HOME',
    '${IFS}',
    '$((1+1))',
    ';',
    '|',
    '&',
    '>',
    '*',
    '~',
    '#',
    '!',
    '-n',
    '%s',
    '{id}',
    '{{',
    '}}',
  );
  const anyCodePoint = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((s) => !s.includes('\0'));
  const cell = fc.string({ unit: fc.oneof(hostile, anyCodePoint), maxLength: 12 });

  // Each case starts a shell (the nested one two): the sizes fit a loaded CI machine, and
  // `npm run test:deep` runs the deep variants (test/helpers/property-runs.ts).
  propertyTest('any cell without NUL reaches the command exactly, and runs nothing', { ci: 100, local: 300, deep: 5000 }, (numRuns) => {
    fc.assert(
      fc.property(cell, (description) => {
        const command = renderCommand('printf %s {description}', { description, id: 'A' });
        const out = shellOutput(command, dir);
        expect(out.equals(Buffer.from(description, 'utf8'))).toBe(true);
        expect(existsSync(marker)).toBe(false);
      }),
      { numRuns },
    );
  });

  propertyTest('any cell reaches the command exactly inside the template\'s own quotes and in $(...), and runs nothing', { ci: 100, local: 300, deep: 5000 }, (numRuns) => {
    const contexts: [string, (v: string) => string][] = [
      ['{v}', (v) => v],
      ['"{v}"', (v) => v],
      ["'{v}'", (v) => v],
      ['"<{v}>"', (v) => `<${v}>`],
      ["'x{v}y'", (v) => `x${v}y`],
      ['pre{v}post', (v) => `pre${v}post`],
      [`"$(printf '%s.' {v})"`, (v) => `${v}.`],
      [`"$(printf '%s.' "{v}")"`, (v) => `${v}.`],
      [`"a$(printf '%s' "b'{v}'")c"`, (v) => `ab'${v}'c`],
    ];
    const template = contexts.map(([place]) => `printf %s ${place}`).join("; printf '|'; ");
    fc.assert(
      fc.property(cell, (v) => {
        const out = shellOutput(renderCommand(template, { v }), dir);
        expect(out.toString('utf8')).toBe(Buffer.from(contexts.map(([, expected]) => expected(v)).join('|'), 'utf8').toString('utf8'));
        expect(existsSync(marker)).toBe(false);
      }),
      { numRuns },
    );
  });

  describe('a cell nested in quotes, ${...}, $\'...\' and $(...)', () => {
    // Each wrapper opens a context around what it wraps; up to three, '' being none.
    const wrappers: [string, string][] = [
      ['', ''],
      ['"', '"'],
      ["'", "'"],
      ['${U:-', '}'],
      ['${U#', '}'],
      ["$'", "'"],
      ['$(printf %s ', ')'],
    ];
    const templates = wrappers.flatMap((outer) =>
      wrappers.flatMap((middle) => wrappers.map((inner) => `printf %s ${[outer, middle, inner].reduceRight((text, [open, close]) => open + text + close, '{v}')}`)),
    );
    // A marker of its own, removed before each try, so that shrinking sees each template afresh.
    const leaked = join(dir, 'pwned-nested');
    // Each cell holds several ways out, so that one run tries them all.
    const way = (quote: string) => `${quote}; touch ${leaked}; ${quote}`;
    const hostileCells = [
      `$(touch ${leaked})\`touch ${leaked}\`${way("'")}${way('"')}`,
      `\\'; touch ${leaked}; '`,
      `'"$(touch ${leaked})"'`,
      `(touch ${leaked})`,
    ];
    // Every template of three wrappers is either refused (it never reaches a shell) or one of
    // these cases, with each hostile cell.
    const accepted = templates.filter((template) => templateProblems(template, ['v']).length === 0);
    const cases = accepted.flatMap((template) => hostileCells.map((v) => ({ template, v })));
    // One driver shell per shell runs the chosen cases, each in a shell of its own (`SHELL -c`).
    // Spawning each from this process cost up to 50 times as much on a loaded CI box (the
    // 100 cases took over 120 s in the suite, 2 s alone); a shell forks a shell cheaply.
    const casesDir = join(dir, 'nested-cases');
    const driver = `for f in "$1"/*.cmd; do rm -f "$2"; "$3" -c "$(cat "$f")" >/dev/null 2>&1 </dev/null; if [ -e "$2" ]; then printf '%s\\n' "$f"; fi; done`;
    const runNothing = (chosen: { template: string; v: string }[]) => {
      rmSync(casesDir, { recursive: true, force: true });
      mkdirSync(casesDir);
      const commands = chosen.map(({ template, v }) => renderCommand(template, { v }));
      // The commands hold no NUL and end in no newline, so $(cat) gives each back as written.
      commands.forEach((command, i) => writeFileSync(join(casesDir, `${String(i).padStart(4, '0')}.cmd`), command));
      for (const shell of ['/bin/sh', 'bash']) {
        const result = spawnSync('/bin/sh', ['-c', driver, 'driver', casesDir, leaked, shell], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        expect(result.status, result.stderr).toBe(0);
        const leaks = result.stdout.split('\n').filter(Boolean).map((file) => `${shell} -c ${commands[Number(file.slice(-8, -4))]}`);
        // A syntax error is fine; running the cell's command is not.
        expect(leaks).toEqual([]);
      }
      rmSync(leaked, { force: true });
    };

    test('some of the 343 templates are refused, the others reach the shells', () => {
      expect(accepted.length).toBeGreaterThan(0);
      expect(accepted.length).toBeLessThan(templates.length);
      expect(templates).toHaveLength(wrappers.length ** 3);
    });

    // The deep variant tries every case once, in both shells.
    propertyTest('every accepted one runs nothing, in dash and bash', { ci: 100, local: 200, deep: cases.length }, (numRuns) => {
      if (numRuns >= cases.length) runNothing(cases);
      else fc.assert(fc.property(fc.shuffledSubarray(cases, { minLength: numRuns, maxLength: numRuns }), runNothing), { numRuns: 1 });
    });
  });

  test('through a whole run, a hostile description is written by the command byte for byte', async () => {
    const descriptions = {
      SUBST: '$(touch pwned-subst) and `touch pwned-tick`',
      QUOTES: `it's "quoted" '' \\'; touch pwned-quote; echo '`,
      LINES: 'first line\n  $(touch pwned-line)\n\tlast; touch pwned-semicolon ',
      FLAG: '-n',
    };
    const dir = buildSession(
      Object.entries(descriptions).map(([id, description]) => ({ id, description, role: 'r' })),
    );
    const result = await runCli('run', dir, '--cmd', 'printf %s {description} > {id}.out && echo written', '--concurrency', '2');
    expect(result.code).toBe(0);
    for (const [id, description] of Object.entries(descriptions)) {
      expect(readFileSync(join(dir, `${id}.out`), 'utf8')).toBe(description);
    }
    expect(readdirSync(dir).filter((name) => name.startsWith('pwned'))).toEqual([]);
    expect([...readRows(dir).values()].map((row) => row.findings)).toEqual(['written', 'written', 'written', 'written']);
  });
});
