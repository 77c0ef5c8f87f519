import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { WaveError } from '../errors.js';
import type { AnswerSource, GateDecision } from './types.js';

const kChoices: Record<string, GateDecision['decision']> = {
  '1': 'continue',
  c: 'continue',
  continue: 'continue',
  'continue deeper': 'continue',
  '2': 'adjust',
  a: 'adjust',
  adjust: 'adjust',
  'adjust direction': 'adjust',
  '3': 'done',
  d: 'done',
  done: 'done',
};

/** Reads "Continue deeper", "adjust", "3", … as a decision; undefined when it is none. */
export function parseDecision(text: string): GateDecision['decision'] | undefined {
  return kChoices[text.trim().toLowerCase()];
}

/**
 * Answers from `--answers FILE`: a JSON list used in order. An item is a decision
 * ("Continue deeper", "Adjust direction", "Done", or 1/2/3), or `{"decision", "focus"}`;
 * after a plain "Adjust", the next item is the new focus.
 */
export class AnswerFile implements AnswerSource {
  readonly #items: unknown[];
  readonly #path: string;
  readonly source: string;

  constructor(path: string) {
    this.#path = path;
    this.source = basename(path);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new WaveError('USAGE', `--answers ${path}: not a readable JSON file: ${(error as Error).message}`, { path });
    }
    if (!Array.isArray(parsed)) throw new WaveError('USAGE', `--answers ${path}: expected a JSON list of answers`, { path });
    this.#items = [...parsed];
  }

  async decide(question: string): Promise<GateDecision> {
    const item = this.#items.shift();
    if (item === undefined) throw new Error(`--answers ${this.#path} has no answer left for: ${question}`);
    const text = typeof item === 'object' && item !== null ? String((item as { decision?: unknown }).decision) : String(item);
    const decision = parseDecision(text);
    if (!decision) throw new Error(`--answers ${this.#path}: "${text}" is not Continue, Adjust or Done`);
    if (decision !== 'adjust') return { decision };
    const focus =
      typeof item === 'object' && item !== null && (item as { focus?: unknown }).focus !== undefined
        ? String((item as { focus?: unknown }).focus)
        : this.#items.shift();
    if (typeof focus !== 'string' || focus.trim() === '') {
      throw new Error(`--answers ${this.#path}: "Adjust" needs the new focus as the next answer`);
    }
    return { decision, focus };
  }
}

/** `--auto`: every gate is answered Done. */
export class AutoAnswers implements AnswerSource {
  readonly source = '--auto';

  async decide(): Promise<GateDecision> {
    return { decision: 'done' };
  }
}

/** Asks a person on the terminal. */
export class TerminalAnswers implements AnswerSource {
  readonly source = 'the terminal';
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;

  constructor(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr) {
    this.#input = input;
    this.#output = output;
  }

  async decide(question: string): Promise<GateDecision> {
    // Line mode, not raw mode: readline's raw mode throws an uncaught EIO when the terminal
    // hangs up mid-question, which would end the whole run.
    const prompt = createInterface({ input: this.#input, output: this.#output, terminal: false });
    // End of input (the terminal closed, or Ctrl-D) leaves a question unanswered for ever:
    // the gate fails, saying why, rather than hold the run.
    const closed = new Promise<never>((_, reject) =>
      prompt.once('close', () =>
        reject(new Error(`${question} No answer: the terminal closed before the question was answered; run again to be asked, or pass --answers FILE or --auto`)),
      ),
    );
    closed.catch(() => {}); // closing it ourselves after an answer is no error
    const ask = (text: string) => Promise.race([prompt.question(text), closed]);
    try {
      for (;;) {
        const answer = await ask(`${question}\n  1) Continue deeper  2) Adjust direction  3) Done\n> `);
        const decision = parseDecision(answer);
        if (!decision) continue;
        if (decision !== 'adjust') return { decision };
        const focus = (await ask('New focus: ')).trim();
        if (focus !== '') return { decision, focus };
      }
    } finally {
      prompt.close();
    }
  }
}

/** No terminal, no file, no --auto: a gate cannot be answered, and says how to answer it. */
export class NoAnswers implements AnswerSource {
  readonly source = 'no source';

  async decide(question: string): Promise<GateDecision> {
    throw new Error(`${question} No answer can be had: run on a terminal, or pass --answers FILE or --auto`);
  }
}
