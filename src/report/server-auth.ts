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

/** How a request proved it may see the session: by header or cookie, by the query (then a cookie is set), or not at all. */
export type Proof = 'header' | 'cookie' | 'query' | 'none';

/** Which proof of `token` a request carries: `Authorization: Bearer`, the cookie, or `?token=`. */
export function proofOf(request: IncomingMessage, url: URL, token: string): Proof {
  const header = request.headers.authorization ?? '';
  if (header.startsWith('Bearer ') && sameSecret(header.slice(7).trim(), token)) return 'header';
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === kTokenCookie && sameSecret(decodeURIComponent(value.join('=')), token)) return 'cookie';
  }
  const query = url.searchParams.get('token');
  if (query !== null && sameSecret(query, token)) return 'query';
  return 'none';
}

/**
 * A page served on a loopback address is reachable by any web page the person opens, through
 * a DNS name that points at 127.0.0.1 (DNS rebinding): only requests that name a loopback
 * host in their Host header are answered.
 */
export function hostHeaderIsLoopback(request: IncomingMessage): boolean {
  const host = request.headers.host ?? '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return isLoopbackHost(name);
}
