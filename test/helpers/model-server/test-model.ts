import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from 'node-llama-cpp';

/** The project's root folder (this file is test/helpers/model-server/test-model.ts). */
const kProjectRoot = fileURLToPath(new URL('../../../', import.meta.url));

const kModelInShared = 'shared/models/stories260K.gguf';

/**
 * The real model of the tests: `$CSV_WAVE_TEST_MODEL`, else `../shared/models/stories260K.gguf`
 * next to the project (a 1.2 MB TinyStories Llama; its README there says where it comes from).
 * A clone one level further down (a git worktree in a sibling folder) finds it in the nearest
 * ancestor that has `shared/models/`.
 */
export const kTestModelPath = process.env['CSV_WAVE_TEST_MODEL'] ?? findSharedModel();

function findSharedModel(): string {
  const nextToProject = resolve(kProjectRoot, '..', kModelInShared);
  for (let folder = resolve(kProjectRoot, '..'); ; folder = dirname(folder)) {
    const candidate = resolve(folder, kModelInShared);
    if (existsSync(candidate)) return candidate;
    if (dirname(folder) === folder) return nextToProject;
  }
}

/**
 * Whether a missing or broken model fails the tests instead of skipping them: under CI
 * (`CI=true`) the real-model tests must run, never pass by skipping (as with redis-server).
 */
export const kModelTestsRequired = process.env['CI'] === 'true';

/** The loaded model, shared by every server a test file starts. */
export interface TestModel {
  llama: Llama;
  model: LlamaModel;
  path: string;
}

let loaded: Promise<TestModel | undefined> | undefined;

/**
 * Loads the model once per test file (vitest gives each file its own module cache). Resolves
 * `undefined` after printing why when the tests should skip; under CI it throws instead.
 * Never builds llama.cpp from source nor downloads anything: only the prebuilt binary of
 * the node-llama-cpp package is used, on the CPU.
 */
export function loadTestModel(): Promise<TestModel | undefined> {
  loaded ??= load();
  return loaded;
}

async function load(): Promise<TestModel | undefined> {
  const skip = (why: string): undefined => {
    const message = `Real-model tests: ${why}`;
    if (kModelTestsRequired) throw new Error(`${message} (CI=true: these tests must run)`);
    console.warn(`${message}; skipping them. Set CSV_WAVE_TEST_MODEL to the path of stories260K.gguf to run them.`);
    return undefined;
  };
  if (!existsSync(kTestModelPath)) return skip(`no model at ${kTestModelPath}`);
  try {
    const llama = await getLlama({ build: 'never', gpu: false, logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath: kTestModelPath });
    return { llama, model, path: kTestModelPath };
  } catch (error) {
    return skip(`the model at ${kTestModelPath} did not load (${error instanceof Error ? error.message : String(error)})`);
  }
}
