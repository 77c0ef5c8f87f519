import { WaveError } from '../../../errors.js';

/** The URL with its password (and a user's secret in the query) replaced by `***`: what messages show. */
export function maskRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL: whatever follows a `:` before an `@` may be a password.
    return url.replace(/:[^:@/]*@/, ':***@');
  }
  if (parsed.password !== '') parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.toString();
}

/** Checks that the URL is a Redis URL (redis:// or rediss://); a WaveError USAGE otherwise. */
export function checkRedisUrl(url: string, flag: string): string {
  let protocol = '';
  try {
    protocol = new URL(url).protocol;
  } catch {
    // Reported below.
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new WaveError('USAGE', `Expected \`${flag}\` to be a Redis URL (redis://[:password@]host:port[/db]), got \`${maskRedisUrl(url)}\``);
  }
  return url;
}

/** The Redis URL of a `--redis` flag, else CSV_WAVE_REDIS_URL (which keeps a password out of `ps`); undefined without either. */
export function redisUrlFrom(flag: string | undefined): string | undefined {
  const url = flag ?? process.env['CSV_WAVE_REDIS_URL'];
  return url === undefined || url === '' ? undefined : checkRedisUrl(url, flag === undefined ? 'CSV_WAVE_REDIS_URL' : '--redis');
}
