/**
 * The secret the tests' bullmq coordinators and workers sign jobs and replies with
 * (CSV_WAVE_SECRET). Set in the environment of every test process that runs the CLI, in
 * process (runCli) or spawned (spawnCli inherits it), so that a test's coordinator and
 * workers trust each other as a real deployment's would; never passed in argv, where `ps`
 * would show it. A test of a missing or wrong secret removes or changes it for its own process.
 */
export const kTestSecret = 'test-secret-0123456789abcdef0123456789abcdef';

process.env['CSV_WAVE_SECRET'] = kTestSecret;
