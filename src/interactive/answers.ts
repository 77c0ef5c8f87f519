import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { WaveError } from '../errors.js';
import { readJsonFile } from '../knowledge/contracts/json-file.js';
import type { AnswerPosition, AnswerSource, GateDecision } from './types.js';

/** The most bytes an answers file may have: a list of answers, not a data set. */
const kMaxAnswersBytes = 1024 * 1024;
/** The most answers a file may list. */
const kMaxAnswers = 10_000;

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
  readonly #sha256: string;
  /** The index of the next item to use. */
  #next = 0;
  readonly source: string;

  constructor(path: string) {
    this.#path = path;
    this.source = basename(path);
    const { value: parsed, text } = readJsonFile(path, `--answers ${path}`, 'USAGE', kMaxAnswersBytes);
    if (!Array.isArray(parsed)) throw new WaveError('USAGE', `--answers ${path}:1: expected a JSON list of answers`, { path });
    if (parsed.length > kMaxAnswers) throw new WaveError('USAGE', `--answers ${path}: ${parsed.length} answers, past the ${kMaxAnswers} a file may list`, { path });
    this.#items = [...parsed];
    this.#sha256 = createHash('sha256').update(text).digest('hex');
  }

  position(): AnswerPosition {
    return { file: this.source, sha256: this.#sha256, next: this.#next };
  }

  /**
   * A resume goes on where the session's finished gates left this file: the furthest
   * position they recorded from the same bytes. Another file (other bytes) starts at its first item.
   */
  resumeAfter(positions: readonly unknown[]): void {
    for (const position of positions) {
      const { sha256, next } = (position ?? {}) as Partial<AnswerPosition>;
      if (sha256 === this.#sha256 && Number.isSafeInteger(next) && next! > this.#next && next! <= this.#items.length) this.#next = next!;
    }
  }

  #take(): unknown {
    return this.#next < this.#items.length ? this.#items[this.#next++] : undefined;
  }

  async answer(question: string, choices: string, check: (text: string) => string | undefined): Promise<string> {
    const index = this.#next;
    const item = this.#take();
    if (item === undefined) throw new Error(`--answers ${this.#path} has no answer left (${index} used) for: ${question} (${choices})`);
    if (typeof item !== 'string') throw new Error(`--answers ${this.#path}: item ${index + 1} is ${JSON.stringify(item).slice(0, 80)}, not a text: ${choices}`);
    const problem = check(item);
    if (problem !== undefined) throw new Error(`--answers ${this.#path}: item ${index + 1} ${JSON.stringify(item.slice(0, 200))}: ${problem}`);
    return item;
  }

  async decide(question: string): Promise<GateDecision> {
    const item = this.#take();
    if (item === undefined) throw new Error(`--answers ${this.#path} has no answer left for: ${question}`);
    const text = typeof item === 'object' && item !== null ? String((item as { decision?: unknown }).decision) : String(item);
    const decision = parseDecision(text);
    if (!decision) throw new Error(`--answers ${this.#path}: "${text}" is not Continue, Adjust or Done`);
    if (decision !== 'adjust') return { decision };
    const focus =
      typeof item === 'object' && item !== null && (item as { focus?: unknown }).focus !== undefined
        ? String((item as { focus?: unknown }).focus)
        : this.#take();
    if (typeof focus !== 'string' || focus.trim() === '') {
      throw new Error(`--answers ${this.#path}: "Adjust" needs the new focus as the next answer`);
    }
    return { decision, focus };
  }
}

/** `--auto`: every discussion gate is answered Done; the quality gate decides by its threshold. */
export class AutoAnswers implements AnswerSource {
  readonly source = '--auto';
  readonly auto = true;

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

  async answer(question: string, choices: string, check: (text: string) => string | undefined): Promise<string> {
    return this.#ask(async (ask) => {
      for (;;) {
        const text = (await ask(`${question}\n  ${choices}\n> `)).trim();
        const problem = check(text);
        if (problem === undefined) return text;
        this.#output.write(`${problem}\n`);
      }
    }, question);
  }

  async decide(question: string): Promise<GateDecision> {
    return this.#ask(async (ask) => {
      for (;;) {
        const answer = await ask(`${question}\n  1) Continue deeper  2) Adjust direction  3) Done\n> `);
        const decision = parseDecision(answer);
        if (!decision) continue;
        if (decision !== 'adjust') return { decision };
        const focus = (await ask('New focus: ')).trim();
        if (focus !== '') return { decision, focus };
      }
    }, question);
  }

  async #ask<T>(dialogue: (ask: (text: string) => Promise<string>) => Promise<T>, question: string): Promise<T> {
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
      return await dialogue(ask);
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

  async answer(question: string, choices: string): Promise<string> {
    throw new Error(`${question} (${choices}) No answer can be had: run on a terminal, or pass --answers FILE or --auto`);
  }
}
