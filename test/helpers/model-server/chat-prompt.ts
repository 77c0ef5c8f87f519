/** One message of a chat request, its content as text. */
export interface ChatMessage {
  role: string;
  content: string;
}

/**
 * The request's messages as text, or why they cannot be read. A content may be a string or,
 * as OpenAI allows, a list of `{type: 'text', text}` parts.
 */
export function readMessages(value: unknown): ChatMessage[] | string {
  if (!Array.isArray(value) || value.length === 0) return "'messages' must be a non-empty array";
  const messages: ChatMessage[] = [];
  for (const [index, item] of value.entries()) {
    const message = item as { role?: unknown; content?: unknown } | null;
    if (message === null || typeof message !== 'object' || typeof message.role !== 'string') return `messages[${index}] needs a string 'role'`;
    const content = contentText(message.content);
    if (content === undefined) return `messages[${index}].content must be a string or a list of text parts`;
    messages.push({ role: message.role, content });
  }
  return messages;
}

function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (content === null) return '';
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (part === null || typeof part !== 'object' || part.type !== 'text' || typeof part.text !== 'string') return undefined;
    text += part.text;
  }
  return text;
}

/**
 * The prompt the model continues: one `role: content` line per message, then `assistant: `.
 * stories260K has no chat template of its own; the server counts the tokens of exactly this.
 */
export function renderChat(messages: readonly ChatMessage[]): string {
  return `${messages.map((message) => `${message.role}: ${message.content}\n`).join('')}assistant: `;
}

/** The task a request is for, from the `Task: <id>` line of csv-wave's prompts (undefined for others). */
export function taskOf(messages: readonly ChatMessage[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'user') continue;
    const id = /^Task: *(\S+)/m.exec(message.content)?.[1];
    if (id !== undefined) return id;
  }
  return undefined;
}
