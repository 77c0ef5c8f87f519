import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** The cookie a browser keeps the token in after it came once as `?token=`. */
export const kTokenCookie = 'csv_wave_token';

/** True for the addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(token, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A cookie's value decoded, or undefined when it is no valid percent-encoding (`%E0%A4%A`): a proof of nothing, never an error. */
function decodedCookie(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** How a request proved it may see the session: by header or cookie, by the query (then a cookie is set), or not at all. */
export type Proof = 'header' | 'cookie' | 'query' | 'none';

/** Which proof of `token` a request carries: `Authorization: Bearer`, the cookie, or `?token=`. */
export function proofOf(request: IncomingMessage, url: URL, token: string): Proof {
  const header = request.headers.authorization ?? '';
  if (header.startsWith('Bearer ') && sameSecret(header.slice(7).trim(), token)) return 'header';
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name !== kTokenCookie) continue;
    const given = decodedCookie(value.join('='));
    if (given !== undefined && sameSecret(given, token)) return 'cookie';
  }
  const query = url.searchParams.get('token');
  if (query !== null && sameSecret(query, token)) return 'query';
  return 'none';
}

/**
 * The host named by a Host header, lower-cased, when the header is what a browser sends: a
 * name or an IPv4 address, or an IPv6 address in brackets, then at most `:` and a port.
 * Anything else (`localhost:8765@evil.com`, `[::1]evil.com`, `localhost:`, a space) is undefined:
 * a lenient split would read `localhost` out of a header that names another host.
 */
export function hostOfHeader(header: string): string | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(\d{1,5}))?$/.exec(header);
  if (!match || Number(match[2] ?? 0) > 65535) return undefined;
  return match[1]!.toLowerCase();
}

/**
 * A page served on a loopback address is reachable by any web page the person opens, through
 * a DNS name that points at 127.0.0.1 (DNS rebinding): only requests that name a loopback
 * host in their Host header are answered.
 */
export function hostHeaderIsLoopback(request: IncomingMessage): boolean {
  const host = hostOfHeader(request.headers.host ?? '');
  return host !== undefined && isLoopbackHost(host);
}

/**
 * True for a request another site's page made in the background (`Sec-Fetch-Site`, which
 * every current browser sends): an image, a script or a `no-cors` fetch of `/events` from a
 * page on another origin, even on this machine, which could hold the live view's places or
 * make the server read the session again and again. A navigation (a link followed) is not
 * refused: the other page cannot read what it opens. Clients that are no browser send no
 * such header.
 */
export function isCrossSiteSubresource(request: IncomingMessage): boolean {
  const site = request.headers['sec-fetch-site'];
  return (site === 'cross-site' || site === 'same-site') && request.headers['sec-fetch-mode'] !== 'navigate';
}
