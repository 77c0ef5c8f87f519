import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TerminalAnswers } from '../../src/interactive/answers.js';

// The discussion gate asking a person: on a fake terminal (two streams), answered, and
// left unanswered because the terminal went away.

function terminal(): { input: PassThrough; output: PassThrough; shown: () => string } {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.setEncoding('utf8').on('data', (text: string) => (shown += text));
  return { input, output, shown: () => shown };
}

/** Waits, a turn of the event loop at a time, until what the fake terminal shows says so. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('TerminalAnswers', () => {
  it('asks, and takes an answer typed on its own line', async () => {
    const { input, output, shown } = terminal();
    const answer = new TerminalAnswers(input, output).decide('Go deeper?');
    input.write('3\n');
    await expect(answer).resolves.toEqual({ decision: 'done' });
    expect(shown()).toContain('Go deeper?\n  1) Continue deeper  2) Adjust direction  3) Done\n> ');
  });

  it('asks again after an answer it cannot read, and asks for the new focus after "adjust"', async () => {
    const { input, output, shown } = terminal();
    const answer = new TerminalAnswers(input, output).decide('Go deeper?');
    // A person answers each prompt once it is shown.
    input.write('maybe\n');
    await until(() => shown().split('3) Done').length === 3);
    input.write('2\n');
    await until(() => shown().includes('New focus: '));
    input.write('costs first\n');
    await expect(answer).resolves.toEqual({ decision: 'adjust', focus: 'costs first' });
  });

  it('the terminal closing before an answer fails the gate with a clear message instead of holding the run', async () => {
    const { input, output } = terminal();
    const answer = new TerminalAnswers(input, output).decide('Go deeper?');
    input.end();
    await expect(answer).rejects.toThrow(
      'Go deeper? No answer: the terminal closed before the question was answered; run again to be asked, or pass --answers FILE or --auto',
    );
  });
});
