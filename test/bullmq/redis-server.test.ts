import { createConnection } from 'node:net';
import { describe, expect, it } from 'vitest';
import { kRunRedisTests, startRedis } from '../helpers/redis-server.js';

/** One PING over a raw socket: the answer Redis gives, or the socket's error. */
function ping(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (text: string) => {
      socket.destroy();
      resolve(text.trim());
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe.runIf(kRunRedisTests)('the test redis-server', () => {
  it('answers on its loopback port, stops, and comes back on the same port', async () => {
    const redis = await startRedis();
    try {
      expect(await ping(redis.port)).toBe('+PONG');
      await redis.stop();
      expect(await ping(redis.port)).toBe('ECONNREFUSED');
      await redis.restart();
      expect(await ping(redis.port)).toBe('+PONG');
    } finally {
      await redis.dispose();
    }
  });
});
