import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';

/**
 * The pieces the scripted agent servers share (responses-server.ts for codex,
 * messages-server.ts for claude): a loopback HTTP server that records every request,
 * server-sent events, a scripted list of replies, and a trap for traffic that should never
 * leave loopback. Everything listens on 127.0.0.1, port 0.
 */

/** One request as it arrived. */
export interface RecordedRequest {
  method: string;
  /** The path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The JSON body, or undefined when there was none or it was not JSON. */
  body: unknown;
}

/** An HTTP error reply: a status, a JSON body, optional headers (`retry-after`). */
export interface HttpErrorReply {
  kind: 'http-error';
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A request that never gets an answer: the socket stays open until the server closes. */
export interface HangReply {
  kind: 'hang';
}

/** What every scripted server has: its URL, what it was sent, and a close that ends every connection. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** Resolves once `count` requests of the server's main route have arrived. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A reply source: the next scripted reply for a request, or a function of the request; the
 * function may answer later (a promise: model-replies.ts generates the answer with a real model).
 */
export type Script<R> = R[] | ((request: RecordedRequest, index: number) => R | Promise<R>);

/** The next reply of a script; a script run out answers with `whenDone`. */
export function nextReply<R>(script: Script<R>, request: RecordedRequest, index: number, whenDone: R): R | Promise<R> {
  if (typeof script === 'function') return script(request, index);
  return index < script.length ? script[index]! : whenDone;
}

/** Reads a request's body as JSON (undefined when it is empty or not JSON). */
export async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Starts writing a server-sent event stream. */
export function startEvents(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** One server-sent event: `event: <type>` and its JSON data. */
export function writeEvent(response: ServerResponse, type: string, data: unknown): void {
  response.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function writeJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/**
 * A loopback server that records each request and hands it to `handle`. `isMain` tells the
 * requests `waitForRequests` counts (a CLI's own side requests, a model list say, are not).
 */
export async function startLoopbackServer(
  handle: (request: RecordedRequest, response: ServerResponse) => void | Promise<void>,
  isMain: (request: RecordedRequest) => boolean,
): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const mainCount = () => requests.filter(isMain).length;
  const server: Server = createServer((incoming, response) => {
    void (async () => {
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: await readJsonBody(incoming),
      };
      requests.push(recorded);
      const count = mainCount();
      for (const waiter of waiters.filter((waiter) => waiter.count <= count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      try {
        await handle(recorded, response);
      } catch (error) {
        if (!response.headersSent) writeJson(response, 500, { error: { message: String(error) } });
        else response.end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    waitForRequests: (count) =>
      count <= mainCount() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A port that takes any TCP connection and records its first bytes, then closes it: set as
 * HTTP(S)_PROXY and ALL_PROXY, it catches a CLI's traffic meant for anywhere but loopback
 * (NO_PROXY=127.0.0.1 keeps the scripted server direct). A test asserts `connections` stays empty.
 */
export interface ProxyTrap {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The first line each connection sent (`CONNECT host:443 HTTP/1.1`, a SOCKS greeting as hex). */
  connections: string[];
  close(): Promise<void>;
}

export async function startProxyTrap(): Promise<ProxyTrap> {
  const connections: string[] = [];
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.once('data', (data: Buffer) => {
      const text = data.toString('latin1');
      const firstLine = text.split('\r\n')[0] ?? '';
      connections.push(/^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(firstLine) ? firstLine : `bytes ${data.subarray(0, 16).toString('hex')}`);
      socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The environment that sends anything but loopback to the trap. */
export function proxyTrapEnv(trap: ProxyTrap): Record<string, string> {
  return {
    HTTP_PROXY: trap.url,
    HTTPS_PROXY: trap.url,
    ALL_PROXY: trap.url,
    http_proxy: trap.url,
    https_proxy: trap.url,
    all_proxy: trap.url,
    NO_PROXY: '127.0.0.1',
    no_proxy: '127.0.0.1',
  };
}
