import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const kRepo = fileURLToPath(new URL('../../', import.meta.url));

/** The pages whose links must resolve: the README, CONTRIBUTING.md and every page of docs/. */
function pages(repo: string): string[] {
  const docs = join(repo, 'docs');
  const inDocs = existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => join('docs', name)) : [];
  return ['README.md', 'CONTRIBUTING.md', ...inDocs].filter((page) => existsSync(join(repo, page)));
}

/** The text outside fenced code blocks, line by line, with the line numbers (from 1). */
function proseLines(text: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push({ line: index + 1, text: line });
  });
  return lines;
}

/** GitHub's anchor of a heading: the text as shown, lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  const shown = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return shown
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const { text } of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading === null) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Every relative link or image of a page that does not resolve, as `page:line: target (why)`. */
function brokenLinks(repo: string, page: string): string[] {
  const broken: string[] = [];
  const file = join(repo, page);
  for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
    // Code spans show link syntax without making links.
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:: not ours to check
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const fromRepo = relative(repo, resolved);
      const where = `${page}:${line}: ${target}`;
      if (fromRepo.startsWith('..')) {
        broken.push(`${where} (outside the repository)`);
        continue;
      }
      if (!existsSync(resolved)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        broken.push(`${where} (an anchor into a file that is not markdown)`);
      } else if (!anchors(resolved).has(anchor)) {
        broken.push(`${where} (no heading with this anchor in ${fromRepo})`);
      }
    }
  }
  return broken;
}

describe('the links of the docs', () => {
  test('every relative link and anchor of README.md, CONTRIBUTING.md and docs/*.md resolves', () => {
    const checked = pages(kRepo);
    expect(checked).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/cli.md']));
    expect(checked.flatMap((page) => brokenLinks(kRepo, page))).toEqual([]);
  });

  test('a missing file, a missing anchor and a link out of the repository are each reported at their line', () => {
    const repo = mkdtempSync(join(tmpdir(), 'csv-wave-links-'));
    writeFileSync(join(repo, 'A.md'), '# A page\n\n## The `run` command: flags\n\nSee [it](#the-run-command-flags).\n');
    writeFileSync(
      join(repo, 'README.md'),
      [
        '# Title',
        '',
        '[good](A.md#a-page) and [good too](A.md#the-run-command-flags) and [web](https://example.org/#x)',
        '[gone](B.md)',
        '[wrong anchor](A.md#flags)',
        '```sh',
        '[in code](C.md)',
        '```',
        '`[in a code span](D.md)` [out](../x.md)',
      ].join('\n'),
    );
    expect(brokenLinks(repo, 'README.md')).toEqual([
      'README.md:4: B.md (no such file)',
      'README.md:5: A.md#flags (no heading with this anchor in A.md)',
      'README.md:9: ../x.md (outside the repository)',
    ]);
    expect(brokenLinks(repo, 'A.md')).toEqual([]);
  });

  test('repeated headings get numbered anchors, as on GitHub', () => {
    const repo = mkdtempSync(join(tmpdir(), 'csv-wave-links-'));
    writeFileSync(join(repo, 'A.md'), '## Top three remaining costs\n\n## Top three remaining costs\n');
    expect([...anchors(join(repo, 'A.md'))]).toEqual(['top-three-remaining-costs', 'top-three-remaining-costs-1']);
  });
});
