import { readFileSync } from 'node:fs';

const kReadme = new URL('../../README.md', import.meta.url);

/** The README's fenced code blocks of one language, in order. */
export function readmeBlocks(language: string): string[] {
  const text = readFileSync(kReadme, 'utf8');
  const blocks: string[] = [];
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const match of text.matchAll(fence)) blocks.push(match[1]!);
  return blocks;
}

/** The README's code block whose first line is `// <name>`: a file a user would copy out. */
export function readmeFile(name: string): string {
  const block = readmeBlocks('js').find((code) => code.startsWith(`// ${name}\n`));
  if (block === undefined) throw new Error(`README.md has no js block starting with // ${name}`);
  return block;
}
