import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { kCommandHelp } from '../../src/cli/command-help.js';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';

const kRepo = fileURLToPath(new URL('../../', import.meta.url));

/** The commands `csv-wave --help` lists. */
async function commandNames(): Promise<string[]> {
  const help = (await runCli('--help')).stdout;
  const section = help.slice(help.indexOf('Commands:'));
  return [...section.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]!).filter((name) => name !== 'help');
}

/** The long flags a command's --help lists. */
async function flagsOf(command: string): Promise<Set<string>> {
  const help = (await runCli(command, '--help')).stdout;
  return new Set([...help.matchAll(/^ +(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((match) => match[1]!));
}

/**
 * Every `csv-wave <command> …` line of the README's and docs' shell blocks (continuation
 * lines joined, comments and environment assignments dropped), with the page it is on.
 */
function documentedCommands(): { page: string; line: string }[] {
  const pages = ['README.md', ...readdirSync(join(kRepo, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
  const found: { page: string; line: string }[] = [];
  for (const page of pages) {
    const text = readFileSync(join(kRepo, page), 'utf8');
    for (const block of text.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)) {
      const joined = block[1]!.replace(/\\\n\s*/g, ' ');
      for (const raw of joined.split('\n')) {
        const line = raw.replace(/\s#.*$/, '');
        const at = line.search(/(?:^|\s)(?:npx )?csv-wave [a-z]/);
        if (at >= 0) found.push({ page, line: line.slice(at).trim().replace(/^npx /, '') });
      }
    }
  }
  return found;
}

describe('--help of every command', () => {
  test('has examples and exit codes; every example names only flags of its command', async () => {
    const names = await commandNames();
    expect(names.length).toBeGreaterThanOrEqual(12);
    expect(Object.keys(kCommandHelp).sort()).toEqual([...names].sort());
    for (const name of names) {
      const help = (await runCli(name, '--help')).stdout;
      expect(help, name).toContain('\nExamples:\n  $ csv-wave ');
      expect(help, name).toMatch(/\nExit codes:\n {2}0 /);
      const flags = await flagsOf(name);
      for (const [example] of kCommandHelp[name]!.examples) {
        expect(example.startsWith(`csv-wave ${name} `), example).toBe(true);
        for (const flag of example.match(/(?<=\s)--[a-z][a-z-]*/g) ?? []) expect(flags.has(flag), `${name} --help has no ${flag} (example: ${example})`).toBe(true);
      }
    }
  });

  test('every csv-wave command line of the README and docs names a command and flags it has', async () => {
    const names = new Set(await commandNames());
    const lines = documentedCommands();
    expect(lines.length).toBeGreaterThan(20);
    for (const { page, line } of lines) {
      const name = /^csv-wave ([a-z]+)/.exec(line)![1]!;
      expect(names.has(name), `${page}: ${line}`).toBe(true);
      const flags = await flagsOf(name);
      for (const flag of line.match(/(?<=\s)--[a-z][a-z-]*/g) ?? []) {
        // A flag after the shell's own `|`, `&&` or `>` belongs to another program.
        const own = line.split(/\s(?:\||&&|>)\s/)[0]!;
        if (!own.includes(flag)) continue;
        expect(flags.has(flag), `${page}: ${line}: ${name} has no ${flag}`).toBe(true);
      }
    }
  });

  test('status --json: its help names every key the document has', async () => {
    const dir = buildSession([{ id: 'A', description: 'do', role: 'r', status: 'completed', findings: 'ok' }], {
      files: { 'usage.ndjson': `${JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', task: 'A', attempt: 1, request: 1, model: 'm', prompt_tokens: 10, completion_tokens: 5 })}\n` },
    });
    const document = JSON.parse((await runCli('status', dir, '--json')).stdout) as Record<string, unknown>;
    const help = (await runCli('status', '--help')).stdout.replace(/\s+/g, ' ');
    const option = help.slice(help.indexOf('--json'), help.indexOf('--only'));
    for (const key of Object.keys(document)) expect(option, key).toContain(`"${key}"`);
    for (const key of Object.keys(document['usage'] as object)) expect(option, `usage.${key}`).toContain(key);
  });
});
