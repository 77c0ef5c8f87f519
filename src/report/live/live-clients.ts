import type { IncomingMessage, ServerResponse } from 'node:http';

/** At most this many pages get live updates at once; the next one is answered 503. */
export const kMaxLiveClients = 32;

/**
 * A live page whose notices wait unsent past this many bytes reads nothing: it is dropped.
 * A notice is a few bytes and the kernel holds megabytes of them first, so a page that
 * reads at all never comes near it.
 */
const kMaxUnsentBytes = 16 * 1024;

/** The text of the notice of a change: its number only; the page fetches `/data` itself. */
function notice(generation: number): string {
  return `data: ${generation}\n\n`;
}

/**
 * The open Server-Sent Events streams of `serve`. Each change sends every stream a notice
 * of a few bytes, never the data: a client that does not read costs the server its socket
 * and at most kMaxUnsentBytes, and no more than kMaxLiveClients streams are open at once.
 */
export class LiveClients {
  readonly #clients = new Set<ServerResponse>();

  get size(): number {
    return this.#clients.size;
  }

  /**
   * Takes `response` as a live stream and sends it the number of the latest change (so a page
   * that missed one while it connected fetches it), or answers 503 when kMaxLiveClients are
   * open already. False when it was refused.
   */
  add(request: IncomingMessage, response: ServerResponse, headers: Record<string, string>, generation: number | undefined): boolean {
    if (this.#clients.size >= kMaxLiveClients) {
      response.writeHead(503, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '10' });
      response.end(`${kMaxLiveClients} pages get live updates already: close one, then reload this page\n`);
      return false;
    }
    // A stream is idle between changes: the server's timeout for clients that take nothing does not apply to it.
    request.socket.setTimeout(0);
    response.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    response.write(`: csv-wave live\n\n${generation === undefined ? '' : notice(generation)}`);
    this.#clients.add(response);
    response.on('close', () => this.#clients.delete(response));
    return true;
  }

  /** Tells every stream that change `generation` happened; drops the streams that do not read. */
  notify(generation: number): void {
    const text = notice(generation);
    for (const client of this.#clients) {
      client.write(text);
      if (client.writableLength > kMaxUnsentBytes) {
        this.#clients.delete(client);
        client.destroy();
      }
    }
  }

  /** Ends every stream (the server stops). */
  close(): void {
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }
}
