import type OpenAI from 'openai';
import type { RequestUsage } from '../../knowledge/usage.js';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The tokens one answer reports (zero, `reported: false`, when it has no usage). */
export function requestUsage(completion: OpenAI.Chat.Completions.ChatCompletion, request: number, kind: RequestUsage['kind'], model: string): RequestUsage {
  const usage = completion.usage;
  if (!usage) return unreported(request, kind, model);
  return {
    request,
    kind,
    model,
    prompt_tokens: usage.prompt_tokens ?? 0,
    completion_tokens: usage.completion_tokens ?? 0,
    cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? llamaCacheN(completion) ?? 0,
    reported: true,
  };
}

/**
 * The prompt tokens an older llama.cpp server took from its KV cache: it tells them only in
 * its own `timings.cache_n`; newer ones also say `prompt_tokens_details.cached_tokens`.
 */
function llamaCacheN(completion: OpenAI.Chat.Completions.ChatCompletion): number | undefined {
  const cacheN = (completion as { timings?: { cache_n?: unknown } }).timings?.cache_n;
  return typeof cacheN === 'number' && Number.isSafeInteger(cacheN) && cacheN >= 0 ? cacheN : undefined;
}

export function unreported(request: number, kind: RequestUsage['kind'], model: string): RequestUsage {
  return { request, kind, model, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reported: false };
}

/** Characters of a request's messages: what the server's prompt_tokens count. */
export function messageChars(messages: readonly Message[]): number {
  return messages.reduce((sum, message) => sum + (typeof message.content === 'string' ? message.content.length : 0), 0);
}
