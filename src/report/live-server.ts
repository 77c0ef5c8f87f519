import { closeSync, createReadStream, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import type { Session } from '../engine/session.js';
import { WaveError } from '../errors.js';
import { openArtifact } from './artifact-files.js';
import { buildReportData } from './report-data.js';
import { reportHtml } from './report-html.js';
import { hostHeaderIsLoopback, isCrossSiteSubresource, isLoopbackHost, kTokenCookie, proofOf } from './server-auth.js';
import { currentTasks } from './session-state.js';

export interface LiveServerOptions {
  /** @default '127.0.0.1' */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Required for a host other than a loopback address; every request must then carry it. */
  token: string | undefined;
  /** How often the session's files are looked at for changes. @default 250 */
  pollMs?: number;
}

export interface LiveServer {
  url: string;
  close(): Promise<void>;
}

/** The files whose change means the page should update. */
const kWatched = ['tasks.csv', join('.csv-wave', 'journal.ndjson'), 'attempts.ndjson', 'discoveries.ndjson'];
const kSecurityHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

/**
 * `csv-wave serve`: the report page, and Server-Sent Events with the page's data whenever
 * the session's files change, read-only and without the lock (a run may go on beside it).
 */
export async function startLiveServer(session: Session, options: LiveServerOptions): Promise<LiveServer> {
  const { host, token } = options;
  if (!isLoopbackHost(host) && (token === undefined || token === '')) {
    throw new WaveError(
      'USAGE',
      `Serving on ${host} makes the session readable from other machines: give a token with --token (or CSV_WAVE_TOKEN), ` +
        'or serve on 127.0.0.1 (the default)',
    );
  }
  const clients = new Set<ServerResponse>();
  const data = () => JSON.stringify(buildReportData(session.dir, currentTasks(session), { live: true }));

  const server: Server = createServer((request, response) => {
    try {
      handle(request, response);
    } catch (error) {
      if (!response.headersSent) respond(response, 500, `Cannot read the session: ${(error as Error).message}\n`);
      else response.end();
    }
  });
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
    if (url.pathname === '/') {
      const html = reportHtml(buildReportData(session.dir, currentTasks(session), { live: true }));
      return respond(response, 200, html, { 'Content-Type': 'text/html; charset=utf-8' });
    }
    if (url.pathname === '/events') {
      response.writeHead(200, { ...kSecurityHeaders, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
      response.write(': csv-wave live\n\n');
      clients.add(response);
      request.on('close', () => clients.delete(response));
      return;
    }
    // Exactly /artifacts/<id>/<name>.md, as the report links it; both parts are checked in openArtifact.
    const artifact = /^\/artifacts\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (artifact) return sendArtifact(session, artifact[1]!, artifact[2]!, request, response);
    return respond(response, 404, 'Not found\n');
  };

  // Looks at the session's files; when they changed, every open page gets the new data.
  let signature = '';
  // A big session takes a while to read: the server spends at most a fifth of its time on it.
  let notBefore = 0;
  const look = () => {
    if (performance.now() < notBefore) return;
    const now = kWatched
      .map((file) => {
        try {
          const stat = statSync(join(session.dir, file));
          return `${stat.mtimeMs}:${stat.size}`;
        } catch {
          return '-';
        }
      })
      .join('|');
    if (now === signature || clients.size === 0) return;
    let text: string;
    const started = performance.now();
    try {
      text = data();
    } catch {
      return; // A file caught mid-edit by a person: the next look tries again.
    } finally {
      notBefore = performance.now() + 4 * (performance.now() - started);
    }
    signature = now;
    for (const client of clients) client.write(`data: ${text}\n\n`);
  };
  const timer = setInterval(look, options.pollMs ?? 250);

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
        for (const client of clients) client.end();
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
 * read cost one piece, not the whole file.
 */
function sendArtifact(session: Session, id: string, fileName: string, request: IncomingMessage, response: ServerResponse): void {
  const file = openArtifact(session.dir, id, fileName);
  if (file === undefined) return respond(response, 404, 'No such artifact\n');
  response.writeHead(200, {
    ...kSecurityHeaders,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(file.size),
    'Content-Security-Policy': "default-src 'none'",
  });
  if (request.method === 'HEAD' || file.size === 0) {
    closeSync(file.fd);
    response.end();
    return;
  }
  // At most the size it had when opened: Content-Length said so.
  pipeline(createReadStream('', { fd: file.fd, start: 0, end: file.size - 1 }), response, () => {});
}

function respond(response: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...kSecurityHeaders, 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  response.end(body);
}
