import { closeSync, createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import type { Session } from '../../session/session.js';
import { WaveError } from '../../errors.js';
import { openArtifact } from '../artifact-files.js';
import { LiveClients } from './live-clients.js';
import { LiveSnapshots } from './live-snapshots.js';
import { hostHeaderIsLoopback, isCrossSiteSubresource, isLoopbackHost, kTokenCookie, proofOf } from './server-auth.js';

export interface LiveServerOptions {
  /** @default '127.0.0.1' */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Required for a host other than a loopback address; every request must then carry it. */
  token: string | undefined;
  /** How often the session's files are looked at for changes. @default 250 */
  pollMs?: number;
  /**
   * A connection that takes none of what it was sent (or sends nothing) for this long is
   * dropped, so that a client that does not read holds no socket for ever. Live streams are
   * idle between changes and are bounded by their unsent bytes instead (live-clients.ts).
   * @default 30000
   */
  clientTimeoutMs?: number;
}

export interface LiveServer {
  url: string;
  close(): Promise<void>;
}

const kDefaultOptions = { pollMs: 250, clientTimeoutMs: 30_000 };

/** Connections open at once, all clients together; one past it is closed at once. A browser opens about six per origin. */
const kMaxConnections = 256;

const kSecurityHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};
/** For what is shown as it is (the data, an artifact): opened alone it runs nothing and is of no origin. */
const kInertBody = { 'Content-Security-Policy': "default-src 'none'; sandbox" };

/**
 * `csv-wave serve`: the report page, its data as `/data`, and Server-Sent Events that say
 * when the session's files changed, read-only and without the lock (a run may go on beside
 * it). The data is built once per change, and the page fetches it when told of a change.
 */
export async function startLiveServer(session: Session, options: LiveServerOptions): Promise<LiveServer> {
  const { host, token } = options;
  const pollMs = options.pollMs ?? kDefaultOptions.pollMs;
  const clientTimeoutMs = options.clientTimeoutMs ?? kDefaultOptions.clientTimeoutMs;
  if (!isLoopbackHost(host) && (token === undefined || token === '')) {
    throw new WaveError(
      'USAGE',
      `Serving on ${host} makes the session readable from other machines: give a token with --token (or CSV_WAVE_TOKEN), ` +
        'or serve on 127.0.0.1 (the default)',
    );
  }
  const snapshots = new LiveSnapshots(session);
  const clients = new LiveClients();

  const server: Server = createServer((request, response) => {
    try {
      handle(request, response);
    } catch (error) {
      if (!response.headersSent) respond(response, 500, `Cannot read the session: ${(error as Error).message}\n`);
      else response.destroy();
    }
  });
  server.maxConnections = kMaxConnections;
  // No callback: Node destroys a socket that times out (a live stream turns it off).
  server.setTimeout(clientTimeoutMs);

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = requestUrl(request);
    if (url === undefined) return respond(response, 400, 'Bad request target\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') return respond(response, 405, 'Only GET\n');
    if (isLoopbackHost(host) && !hostHeaderIsLoopback(request)) return respond(response, 403, 'Forbidden host\n');
    if (isCrossSiteSubresource(request)) return respond(response, 403, 'Refused: a request made by a page of another site\n');
    if (token !== undefined && token !== '') {
      const proof = proofOf(request, url, token);
      if (proof === 'none') {
        return respond(response, 401, 'A token is needed: open the URL with ?token=…, or send Authorization: Bearer …\n', {
          'WWW-Authenticate': 'Bearer',
        });
      }
      if (proof === 'query') {
        // Once: the token moves to a cookie and out of the address bar and the history.
        url.searchParams.delete('token');
        response.writeHead(303, {
          ...kSecurityHeaders,
          Location: url.pathname + url.search,
          'Set-Cookie': `${kTokenCookie}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
        });
        return response.end();
      }
    }
    if (url.pathname === '/') return respond(response, 200, snapshots.refresh().page(), { 'Content-Type': 'text/html; charset=utf-8' });
    if (url.pathname === '/data') {
      return respond(response, 200, snapshots.refresh().data, { 'Content-Type': 'application/json; charset=utf-8', ...kInertBody });
    }
    if (url.pathname === '/events') {
      // The new stream hears of the latest change at once; the others at the next look, which
      // announces a change that a request for the page or /data built, too.
      clients.add(request, response, kSecurityHeaders, snapshots.latest?.generation);
      return;
    }
    // Exactly /artifacts/<id>/<name>.md, as the report links it; both parts are checked in openArtifact.
    const artifact = /^\/artifacts\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (artifact) return sendArtifact(session, artifact[1]!, artifact[2]!, request, response);
    return respond(response, 404, 'Not found\n');
  };

  // Looks at the session's files while a page is open; a change is built once and announced to every page.
  let notified = 0;
  const look = () => {
    if (clients.size === 0) return;
    let generation: number;
    try {
      generation = snapshots.refresh().generation;
    } catch {
      return; // No snapshot could be read yet: the next look tries again.
    }
    if (generation === notified) return;
    notified = generation;
    clients.notify(generation);
  };
  const timer = setInterval(look, pollMs);

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(new WaveError('USAGE', `Cannot serve on ${host}:${options.port}: ${error.message}`, { cause: error })),
    );
    server.listen(options.port, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        clients.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The request's target as a URL, or undefined for one no URL parser reads (Node's HTTP parser lets `http://[` through). */
function requestUrl(request: IncomingMessage): URL | undefined {
  try {
    return new URL(request.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}

/**
 * An artifact as text, whatever it holds (an artifact is task output), read from the file
 * it opened in pieces as the client takes them: a big artifact and a client that does not
 * read cost one piece, and the client is dropped by the server's timeout.
 */
function sendArtifact(session: Session, id: string, fileName: string, request: IncomingMessage, response: ServerResponse): void {
  const file = openArtifact(session.dir, id, fileName);
  if (file === undefined) return respond(response, 404, 'No such artifact\n');
  response.writeHead(200, {
    ...kSecurityHeaders,
    ...kInertBody,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(file.size),
  });
  if (request.method === 'HEAD' || file.size === 0) {
    closeSync(file.fd);
    response.end();
    return;
  }
  // At most the size it had when opened: Content-Length said so.
  pipeline(createReadStream('', { fd: file.fd, start: 0, end: file.size - 1 }), response, () => {});
}

/** A whole answer. A Buffer body is sent as it is, so that every client of one snapshot shares its bytes. */
function respond(response: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  response.writeHead(status, {
    ...kSecurityHeaders,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
  response.end(body);
}
