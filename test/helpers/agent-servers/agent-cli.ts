import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real agent CLIs of the devDependencies (@openai/codex, @anthropic-ai/claude-code),
 * run offline against the scripted servers. Each ships its native binary in a platform
 * package; npm 11 runs no install scripts unless allowed, so claude's own bin may stay a
 * stub: the binary is taken from the platform package, where it always is.
 */

const kNodeModules = fileURLToPath(new URL('../../../node_modules/', import.meta.url));

/** The Rust target triple codex's platform packages are named by, and claude's platform suffix. */
function platformNames(): { codexPackage: string; codexTriple: string; claudePackage: string } {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  if (process.platform === 'linux') {
    return {
      codexPackage: `@openai/codex-linux-${arch}`,
      codexTriple: `${arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl`,
      claudePackage: `@anthropic-ai/claude-code-linux-${arch}`,
    };
  }
  if (process.platform === 'darwin') {
    return {
      codexPackage: `@openai/codex-darwin-${arch}`,
      codexTriple: `${arch === 'arm64' ? 'aarch64' : 'x86_64'}-apple-darwin`,
      claudePackage: `@anthropic-ai/claude-code-darwin-${arch}`,
    };
  }
  throw new Error(`The agent CLI tests run on Linux and macOS, not ${process.platform}`);
}

/** The codex binary of @openai/codex's platform package. */
export function codexBinary(): string {
  const { codexPackage, codexTriple } = platformNames();
  const path = join(kNodeModules, codexPackage, 'vendor', codexTriple, 'bin', 'codex');
  if (!existsSync(path)) throw new Error(`No codex binary at ${path}: run npm ci (the devDependency @openai/codex brings it)`);
  return path;
}

/** The claude binary of @anthropic-ai/claude-code's platform package (glibc; the musl one where only it is). */
export function claudeBinary(): string {
  const { claudePackage } = platformNames();
  for (const name of [claudePackage, `${claudePackage}-musl`]) {
    const path = join(kNodeModules, name, 'claude');
    if (existsSync(path)) return path;
  }
  throw new Error(`No claude binary in ${claudePackage}: run npm ci (the devDependency @anthropic-ai/claude-code brings it)`);
}

const made: string[] = [];

/** A fresh folder under the system's temporary folder, removed by removeTempDirs. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `csv-wave-${prefix}-`));
  made.push(dir);
  return dir;
}

/** Removes every folder tempDir made so far. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The env key name of the test provider, and the dummy key it holds. */
export const kCodexKeyEnv = 'CSV_WAVE_TEST_CODEX_KEY';
export const kCodexTestKey = 'sk-test-codex-0123456789abcdef';

/**
 * A private CODEX_HOME whose config.toml turns off update checks, analytics and plugins,
 * and, given `baseUrl`, sends every model call there (a provider named loopback,
 * Responses API, no retries): nothing else is asked of the network. Without one, the
 * provider comes from `-c` flags (what csv-wave's --base-url passes).
 */
export function codexHome(baseUrl?: string): string {
  const home = tempDir('codex-home');
  const provider =
    baseUrl === undefined
      ? []
      : [
          '[model_providers.loopback]',
          'name = "loopback"',
          `base_url = "${baseUrl}"`,
          'wire_api = "responses"',
          `env_key = "${kCodexKeyEnv}"`,
          'request_max_retries = 0',
          'stream_max_retries = 0',
          '',
        ];
  writeFileSync(
    join(home, 'config.toml'),
    [
      ...(baseUrl === undefined ? [] : ['model_provider = "loopback"']),
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[features]',
      'plugins = false',
      '',
      ...provider,
    ].join('\n'),
  );
  return home;
}

/** The environment a codex run gets: PATH and the test key only, with HOME and CODEX_HOME private. */
export function codexEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: home, [kCodexKeyEnv]: kCodexTestKey, ...extra };
}

export const kClaudeTestKey = 'sk-ant-test-0123456789abcdef';

/** A private HOME for claude, with its config folder (where sessions are kept for --resume). */
export function claudeHome(): string {
  const home = tempDir('claude-home');
  mkdirSync(join(home, '.claude'));
  return home;
}

/**
 * The environment a claude run gets: the scripted server, a dummy key, a private HOME and
 * config folder, no nonessential traffic. Runs that resume a session share one `home`.
 */
export function claudeEnv(origin: string, extra: Record<string, string> = {}, home: string = claudeHome()): Record<string, string> {
  const config = join(home, '.claude');
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: config,
    ANTHROPIC_BASE_URL: origin,
    ANTHROPIC_API_KEY: kClaudeTestKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // Claude retries a 429 or 5xx itself, with backoff; a test that scripts one wants it once.
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...extra,
  };
}

/** How a CLI run ended, and all it printed. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a binary to its end with `input` on stdin. */
export function runCli(binary: string, args: readonly string[], options: { env: Record<string, string>; cwd: string; input: string }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  });
}

/** The JSON lines of a run's stdout (the lines that are not JSON dropped). */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout.split('\n').flatMap((line) => {
    if (line.trim() === '') return [];
    try {
      const value = JSON.parse(line) as unknown;
      return value !== null && typeof value === 'object' ? [value as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}
