import { APIError } from 'openai';

/**
 * Tokens estimated without a tokenizer: characters divided by a ratio, 3 characters a token
 * at first (English text runs near 4, code and other scripts lower: 3 errs on the safe side),
 * then the ratio the server's own counts show: each answer's prompt_tokens against the
 * characters of the prompt that was sent.
 */
export class TokenEstimate {
  #charsPerToken = kFirstCharsPerToken;

  get charsPerToken(): number {
    return this.#charsPerToken;
  }

  /** The server counted `tokens` for a prompt of `chars` characters. */
  learn(chars: number, tokens: number): void {
    if (!(tokens > 0 && chars > 0)) return;
    // Bounded: a server that counts oddly (a prompt template of its own) must not make every prompt "fit".
    this.#charsPerToken = Math.min(kMaxCharsPerToken, Math.max(kMinCharsPerToken, chars / tokens));
  }

  tokens(chars: number): number {
    return Math.ceil(chars / this.#charsPerToken);
  }

  chars(tokens: number): number {
    return Math.max(0, Math.floor(tokens * this.#charsPerToken));
  }
}

const kFirstCharsPerToken = 3;
const kMinCharsPerToken = 1;
const kMaxCharsPerToken = 8;

/** What a server's 400 says of its context window: its size, and the prompt's tokens when it tells them. */
export interface ContextRefusal {
  contextTokens: number;
  promptTokens?: number;
}

/**
 * Reads a "prompt too long" answer: llama.cpp's server ("the request exceeds the available
 * context size, try increasing it", with `n_ctx` and `n_prompt_tokens` in the error) and
 * OpenAI's ("This model's maximum context length is N tokens. However, your messages
 * resulted in M tokens"). Undefined for any other error.
 */
export function contextRefusal(error: unknown): ContextRefusal | undefined {
  if (!(error instanceof APIError) || error.status !== 400) return undefined;
  const body = (error.error ?? {}) as { message?: unknown; n_ctx?: unknown; n_prompt_tokens?: unknown };
  const message = typeof body.message === 'string' ? body.message : error.message;
  const nCtx = positive(body.n_ctx);
  if (nCtx !== undefined) {
    const promptTokens = positive(body.n_prompt_tokens);
    return { contextTokens: nCtx, ...(promptTokens === undefined ? {} : { promptTokens }) };
  }
  const openAi = /maximum context length is (\d+) tokens/i.exec(message);
  if (openAi) {
    const resulted = /resulted in (\d+) tokens/i.exec(message);
    return { contextTokens: Number(openAi[1]), ...(resulted ? { promptTokens: Number(resulted[1]) } : {}) };
  }
  return undefined;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** The parts of a prompt that may be cut to fit, in the order they are cut. */
export const kCuttableParts = ['upstream', 'discoveries', 'wisdom', 'prev_context'] as const;
export type CuttablePart = (typeof kCuttableParts)[number];
export type PromptParts = Record<CuttablePart, string>;

/** What fitting a prompt into a window gave: the prompt and what was cut, or the sizes that cannot fit. */
export type FittedPrompt =
  | { ok: true; prompt: string; notes: string[] }
  | { ok: false; ownTokens: number; roomTokens: number };

/** Characters cut beyond the estimate's count, for its rounding. */
const kCutSlackChars = 16;

/** The marker a cut part ends with. */
export function cutMarker(kept: number, total: number): string {
  return `\n[… cut to fit the model's context window: ${kept} of ${total} characters kept]`;
}

/**
 * Renders a prompt that fits `roomTokens` (the window less the answer's reserve), cutting
 * the digests, then prev_context, from their end, each with a marker, as far as needed.
 * `render` fills the template with the parts; `fixedChars` is what goes with the prompt
 * (the system prompt). When the prompt does not fit with all four parts empty, the task's
 * own text is too big: the sizes are returned.
 */
export function fitPrompt(
  render: (parts: PromptParts) => string,
  parts: PromptParts,
  fixedChars: number,
  roomTokens: number,
  estimate: TokenEstimate,
): FittedPrompt {
  const size = (prompt: string) => estimate.tokens(prompt.length + fixedChars);
  let prompt = render(parts);
  if (size(prompt) <= roomTokens) return { ok: true, prompt, notes: [] };
  const current: PromptParts = { ...parts };
  const notes: string[] = [];
  for (const name of kCuttableParts) {
    const text = parts[name];
    if (text.length === 0) continue;
    let keep = text.length;
    // The estimate rounds and the marker's digits change its length: a second pass takes what is still over.
    while (keep > 0 && size(prompt) > roomTokens) {
      const over = estimate.chars(size(prompt) - roomTokens) + kCutSlackChars;
      keep = Math.max(0, keep - over - cutMarker(0, text.length).length);
      current[name] = `${text.slice(0, keep)}${cutMarker(keep, text.length)}`;
      prompt = render(current);
    }
    notes.push(`{${name}} cut to fit the model's context window: ${keep} of ${text.length} characters kept`);
    if (size(prompt) <= roomTokens) return { ok: true, prompt, notes };
  }
  const bare = render({ upstream: '', discoveries: '', wisdom: '', prev_context: '' });
  return { ok: false, ownTokens: size(bare), roomTokens };
}
