import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSession, tasksCsv } from './session-builder.js';

/**
 * Texts that run a script, load something or leave their place if a page ever treats them as
 * HTML, JavaScript, a URL or the end of its embedded JSON. Each that runs or loads reaches
 * `recorder` (a loopback server) with its own path, or sets window.__pwned, or opens a dialog.
 */
export function hostilePayloads(recorder: string): string[] {
  return [
    `</script><script>window.__pwned=1;fetch('${recorder}/script');alert(1)</script>`,
    `<img src="${recorder}/img" onerror="window.__pwned=2;alert(2)">`,
    `<svg onload="window.__pwned=3;fetch('${recorder}/svg')"></svg><iframe src="javascript:alert(4)"></iframe>`,
    `<a href="javascript:fetch('${recorder}/href')">click</a> javascript:alert(5)`,
    `<meta http-equiv="refresh" content="0;url=${recorder}/refresh"><base href="${recorder}/base/">`,
    `<link rel="stylesheet" href="${recorder}/css"><style>@import '${recorder}/import';</style>`,
    `<form action="${recorder}/form"><button>go</button></form><object data="${recorder}/object"></object>`,
    `"]}]</script><script>window.__pwned=6</script><script type="application/json">{"a":["`,
    `<!-- <script>window.__pwned=7</script> --> <![CDATA[ ]]> \\u003c/script\\u003e \\"); alert(8); //`,
    `\u2028\u2029 line separators; ${'\u202e'}RTL override; 👩‍👩‍👧 emoji; \u200bzero width`,
    `\u001b]0;terminal title\u0007\u001b[2J\u001b[31mred\u001b[0m \b\b\u0001\u007f`,
  ];
}

/** A column name of tasks.csv that is markup (a header cell of tasksCsv is not quoted: no quote, no comma). */
export const kMarkupColumn = '<img src=x onerror=alert(14)>';

/**
 * A session folder as an attacker would hand one over (copied, unzipped): its name is HTML,
 * and every file the report reads holds the payloads. Tasks whose ids are the names of the
 * page's objects' methods (`constructor`, `toString`, `hasOwnProperty`) and a role
 * `__proto__`, and columns named `__proto__`, `constructor` and in markup, try the page's
 * lookups by key. One findings cell is 1 MB, one title 100 KB.
 */
export function hostileReportSession(recorder: string): { dir: string; payloads: string[]; all: string } {
  const payloads = hostilePayloads(recorder);
  const all = payloads.join(' | ');
  const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-hostile-')), 'session <img src=x onerror="alert(9)"> "\'`');
  // Columns of the person's own named in markup, and like an object's own properties: every row has each as its own key.
  const ownColumns = (markup: string, proto: string, constructor: string): Record<string, string> =>
    Object.fromEntries([
      [kMarkupColumn, markup],
      ['__proto__', proto],
      ['constructor', constructor],
    ]);
  const rows = [
    {
      id: 'H1',
      title: payloads[0]!,
      description: all,
      role: payloads[1]!,
      wave: '1',
      status: 'completed',
      findings: all,
      gc_signal: payloads[2]!,
      severity_summary: payloads[3]!,
      notes: all,
      ...ownColumns(payloads[0]!, payloads[2]!, payloads[7]!),
    },
    { id: 'constructor', title: payloads[7]!, description: 'x', role: '__proto__', wave: '1', status: 'failed', error: all, ...ownColumns('', '', '') },
    { id: 'toString', title: payloads[4]!, description: 'x', role: 'constructor', deps: 'constructor', wave: '2', status: 'skipped', error: 'constructor', ...ownColumns('', '', '') },
    { id: 'hasOwnProperty', title: `${payloads[8]!} `.repeat(1000).slice(0, 100_000), description: payloads[9]!, role: 'r', wave: '2', status: 'pending', ...ownColumns('', '', '') },
    { id: 'valueOf', title: payloads[10]!, description: payloads[5]!, role: payloads[6]!, wave: '2', status: 'in_progress', findings: `${all}\n`.repeat(1_000_000 / all.length), ...ownColumns('', '', '') },
  ];
  buildSession(rows, { dir });
  const attempt = (task: string, extra: Record<string, unknown>) =>
    JSON.stringify({
      run: payloads[0],
      task,
      attempt: 1,
      wave: 1,
      start: '2024-01-01T00:00:00.000Z',
      end: '2024-01-01T00:00:01.000Z',
      duration_ms: 1000,
      outcome: 'completed',
      error_class: '',
      error: '',
      thread: 1,
      host: payloads[1],
      pid: 1,
      prompt_tokens: 0,
      completion_tokens: 0,
      ...extra,
    });
  writeFileSync(
    join(dir, 'attempts.ndjson'),
    [
      attempt('H1', {}),
      payloads[0]!, // not JSON: skipped
      attempt('constructor', { outcome: 'retried', error_class: payloads[1], error: all }),
      attempt('constructor', { attempt: 2, outcome: 'failed', error_class: payloads[7], error: payloads[2]!.repeat(20_000) }),
      `{"__proto__":{"polluted":1},${attempt('toString', {}).slice(1)}`,
      attempt('valueOf', { error_class: '\u2028</script>' }),
      attempt('H1', { attempt: 2, run: payloads[8] }).slice(0, 40), // torn
    ].join('\n') + '\n',
  );
  writeFileSync(
    join(dir, 'discoveries.ndjson'),
    [
      JSON.stringify({ ts: payloads[0], worker: 'H1', type: payloads[1], data: { html: all, link: 'javascript:alert(10)', nested: { deeper: [payloads[7]] } } }),
      `{"ts":"t","worker":"constructor","type":"__proto__","data":{"__proto__":{"polluted":1},"toString":"${payloads[3]!.replace(/"/g, '\\"')}"}}`,
      payloads[7]!,
    ].join('\n') + '\n',
  );
  writeFileSync(join(dir, 'wave-1.csv'), tasksCsv([{ id: 'H1', prev_context: all }, { id: 'constructor', prev_context: payloads[10]! }]));
  mkdirSync(join(dir, 'artifacts', 'H1'), { recursive: true });
  // An artifact whose content is a page with scripts, and files whose names are no artifact names.
  writeFileSync(join(dir, 'artifacts', 'H1', 'page.md'), `<!doctype html><html><body>${all}<script>window.__pwned=11;fetch('${recorder}/artifact')</script></body></html>\n`);
  writeFileSync(join(dir, 'artifacts', 'H1', 'javascript:alert(12).md'), 'x');
  writeFileSync(join(dir, 'artifacts', 'H1', `x"><img src=${'x'} onerror=alert(13)>.md`), 'x');
  return { dir, payloads, all };
}
