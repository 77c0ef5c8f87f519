import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSession } from '../helpers/session-builder.js';
import { rawGet, rawRequest } from '../helpers/raw-http.js';
import { serve, stop, type ServedSession } from '../helpers/serve-cli.js';

/** Requests a browser never sends, to a real `csv-wave serve`, on raw sockets where an HTTP library would refuse to send them. */
describe('csv-wave serve on 127.0.0.1: the Host header', () => {
  let served: ServedSession | undefined;
  beforeAll(async () => {
    served = await serve(buildSession([{ id: 'A', description: 'a', role: 'r' }]));
  });
  afterAll(() => stop(served?.server));

  test('is parsed strictly: a loopback name with anything after it, or no port but a colon, is 403', async () => {
    const { port } = served!;
    for (const host of [
      `localhost:${port}@evil.com`,
      '[::1]evil.com',
      `[::1]:${port}evil.com`,
      `127.0.0.1:${port} evil.com`,
      `127.0.0.1:${port}:80`,
      'localhost:',
      'localhost.',
      `localhost:99999`,
      `127.0.0.1.evil.com:${port}`,
      `evil.com:${port}`,
      `localhost,evil.com`,
      '',
    ]) {
      const answer = await rawRequest(port, ['GET / HTTP/1.1', `Host: ${host}`]);
      expect(answer.status, host).toBe(403);
    }
    // HTTP/1.0 needs no Host header (Node answers 400 to HTTP/1.1 without one).
    expect((await rawRequest(port, ['GET / HTTP/1.0'])).status, 'no Host header').toBe(403);
  });

  test('the Host headers browsers send for a loopback address are answered', async () => {
    const { port } = served!;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost', `LOCALHOST:${port}`, '127.0.0.2']) {
      const answer = await rawRequest(port, ['GET / HTTP/1.1', `Host: ${host}`]);
      expect(answer.status, host).toBe(200);
      expect(answer.text).toContain('id="report-data"');
    }
  });

  test('a page of another site cannot fetch /events or /data in the background; following a link to the page works', async () => {
    const { port } = served!;
    for (const site of ['cross-site', 'same-site']) {
      for (const path of ['/events', '/data', '/']) {
        const answer = await rawGet(port, path, [`Sec-Fetch-Site: ${site}`, 'Sec-Fetch-Mode: no-cors', 'Sec-Fetch-Dest: empty']);
        expect(answer.status, `${site} ${path}`).toBe(403);
      }
    }
    const followed = await rawGet(port, '/', ['Sec-Fetch-Site: cross-site', 'Sec-Fetch-Mode: navigate', 'Sec-Fetch-Dest: document']);
    expect(followed.status).toBe(200);
    expect((await rawGet(port, '/data', ['Sec-Fetch-Site: same-origin', 'Sec-Fetch-Mode: cors'])).status).toBe(200);
    // Nor may it show the page in a frame of its own.
    expect(followed.text).toMatch(/^X-Frame-Options: DENY\r$/im);
  });

  test('a request target no URL parser reads is 400, not 500', async () => {
    const { port } = served!;
    const answer = await rawRequest(port, ['GET http://[ HTTP/1.1', `Host: 127.0.0.1:${port}`]);
    expect(answer.status).toBe(400);
  });
});

describe('csv-wave serve with a token: the cookie', () => {
  let served: ServedSession | undefined;
  beforeAll(async () => {
    served = await serve(buildSession([{ id: 'A', description: 'a', role: 'r' }]), '--host', '0.0.0.0', '--token', 'right-token');
  });
  afterAll(() => stop(served?.server));

  test('a token cookie that is no valid percent-encoding is 401, and a good cookie after it still counts', async () => {
    const { port } = served!;
    for (const cookie of ['csv_wave_token=%E0%A4%A', 'csv_wave_token=%', 'other=1; csv_wave_token=%zz']) {
      const answer = await rawGet(port, '/', [`Cookie: ${cookie}`]);
      expect(answer.status, cookie).toBe(401);
      expect(answer.text).toMatch(/A token is needed/);
    }
    expect((await rawGet(port, '/', ['Cookie: csv_wave_token=%E0%A4%A; csv_wave_token=right-token'])).status).toBe(200);
    expect((await rawGet(port, '/', ['Cookie: csv_wave_token=%E0%A4%A', 'Authorization: Bearer right-token'])).status).toBe(200);
  });
});
