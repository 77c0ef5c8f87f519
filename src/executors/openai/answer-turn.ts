import type OpenAI from 'openai';
import type { AttemptOutcome } from '../types.js';
import { quoteAnswer } from './answer.js';
import { readContractAnswer } from './contract.js';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion;

/** A name the answer's token limit is sent under. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/**
 * The names the limit goes under first, for the synchronous executor and batch lines alike.
 * OpenAI's own API wants the new name (its reasoning models reject max_tokens). The servers
 * that imitate it know the old one and, most of them, the new one: both go, so a server that
 * knows only one still bounds the answer.
 */
export function maxTokensFieldsFor(baseUrl: string): MaxTokensField[] {
  return isOpenAiHost(baseUrl) ? ['max_completion_tokens'] : ['max_completion_tokens', 'max_tokens'];
}

function isOpenAiHost(url: string): boolean {
  try {
    return new URL(url).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/** A completion judged against the model-answer contract: a result, a refusal, or a problem for the repair request. */
export type Judged =
  | { kind: 'result'; result: unknown; notes: string[] }
  | Extract<AttemptOutcome, { kind: 'error' }>
  | { kind: 'repair'; content: string; problem: string };

/** One answer of a task, synchronous or batched, judged the same way (contract.ts). */
export function judgeCompletion(completion: ChatCompletion, task: { id: string; role: string }, pipeline: string): Judged {
  const choice = completion.choices?.[0];
  const refusal = choice?.message?.refusal;
  if (typeof refusal === 'string' && refusal !== '') {
    return { kind: 'error', errorClass: 'task-failure', error: `The model refused the task: ${refusal}` };
  }
  const content = choice?.message?.content ?? '';
  const answer = readContractAnswer(content, choice?.finish_reason, pipeline, task.role);
  if (answer.ok) return { kind: 'result', result: { ...answer.result, id: task.id }, notes: answer.notes };
  return { kind: 'repair', content, problem: answer.problem };
}

/** The repair request's messages: the bad answer, then what was wrong with it. */
export function repairMessages(taskId: string, content: string, problem: string): Message[] {
  return [
    { role: 'assistant', content },
    { role: 'user', content: repairInstruction(taskId, problem) },
  ];
}

/** What a repair asks for, naming what was wrong: the openai repair request's and an agent's repair turn's words. */
export function repairInstruction(taskId: string, problem: string): string {
  return `Your answer could not be used: ${problem}. Answer again with only the corrected JSON object for task ${taskId}, following the result schema and your role instructions.`;
}

/** The failure of an answer that stayed invalid after its repair. */
export function invalidAfterRepair(content: string, problem: string): Extract<AttemptOutcome, { kind: 'error' }> {
  return { kind: 'error', errorClass: 'invalid-output', error: `Invalid model answer after one repair request: ${problem}${quoteAnswer(content)}` };
}
