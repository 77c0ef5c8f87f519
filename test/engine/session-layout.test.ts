import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { initSession } from '../../src/commands/init-session.js';
import { runSession } from '../../src/run/run-session.js';
import { isWaveFile, kLayout, kRunOutputs, waveFile } from '../../src/layout.js';
import { runCli } from '../helpers/cli.js';
import { kScriptedAgentCmd } from '../helpers/scripted-agent.js';

describe('the session folder layout', () => {
  test('every file a run leaves is named by the layout, and init --force removes all of them but a person\'s own', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-layout-')), 'bs');
    expect((await runCli('init', dir, '--template', 'brainstorm', '--mode', 'quick', '--topic', 'T', '--cmd', kScriptedAgentCmd)).code).toBe(0);
    expect((await runSession(dir)).exitCode).toBe(0);

    const named = new Set<string>([kLayout.tasks, kLayout.config, kLayout.engine, ...kRunOutputs]);
    for (const name of readdirSync(dir)) expect(named.has(name) || isWaveFile(name), name).toBe(true);
    const engineFiles = Object.values(kLayout).filter((path) => dirname(path) === kLayout.engine).map((path) => basename(path));
    for (const name of readdirSync(join(dir, kLayout.engine))) expect(engineFiles, name).toContain(name);

    // What this run did not make, another would have (an analyze run, a bullmq run).
    for (const name of kRunOutputs) if (!existsSync(join(dir, name))) writeFileSync(join(dir, name), '');
    writeFileSync(join(dir, waveFile(12)), '');
    for (const path of [kLayout.carried, kLayout.sessionId, kLayout.owner]) writeFileSync(join(dir, path), '');
    writeFileSync(join(dir, 'notes.txt'), 'a file of my own');
    initSession(dir, { template: 'generic', topic: '', force: true });
    expect(readdirSync(dir).sort()).toEqual([kLayout.engine, 'notes.txt', kLayout.config, kLayout.tasks]);
    expect(readdirSync(join(dir, kLayout.engine))).toEqual([]);
  });
});
