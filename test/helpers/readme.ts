import { readFileSync } from 'node:fs';

const kRepo = new URL('../../', import.meta.url);

/**
 * The fenced code blocks of one language in a page of the docs, in order. `page` is the
 * page's path from the repository root: `README.md`, `docs/executors.md`.
 */
export function docBlocks(page: string, language: string): string[] {
  const text = readFileSync(new URL(page, kRepo), 'utf8');
  const blocks: string[] = [];
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const match of text.matchAll(fence)) blocks.push(match[1]!);
  return blocks;
}

/** The page's js block whose first line is `// <name>`: a file a user would copy out. */
export function docFile(page: string, name: string): string {
  const block = docBlocks(page, 'js').find((code) => code.startsWith(`// ${name}\n`));
  if (block === undefined) throw new Error(`${page} has no js block starting with // ${name}`);
  return block;
}
