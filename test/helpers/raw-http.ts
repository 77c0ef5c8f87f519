import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** An HTTP answer as the bytes came: its status code, and the whole text, head and body. */
export interface RawAnswer {
  status: number;
  text: string;
}

/**
 * Sends a request written by hand on a new loopback connection (so that a Host header can be
 * one no HTTP library would send) and reads the answer to the server's close. `lines` are the
 * request line and headers; `Connection: close` is added.
 */
export function rawRequest(port: number, lines: readonly string[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (status) resolve({ status: Number(status[1]), text });
      else reject(new Error(`No HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
    });
    socket.write(`${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n`);
  });
}

/** A GET of `path` with the Host header a browser sends for the port. */
export function rawGet(port: number, path: string, headers: readonly string[] = []): Promise<RawAnswer> {
  return rawRequest(port, [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...headers]);
}

/**
 * A client that asks for `path` and then never reads a byte: the socket is paused at once,
 * so what the server sends fills the kernel's buffers and then waits in the server.
 */
export function slowClient(port: number, path: string): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => {}); // the server may drop it: that is the point
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  return socket;
}

/**
 * The TCP state (as /proc/net/tcp writes it: `01` established, `04` FIN-WAIT-1 …) of the
 * loopback connection whose local port is `localPort` and remote port `remotePort`, or
 * undefined when the kernel has no such connection. Read from the side of `localPort`, it says
 * whether that side closed the connection, even while the other side has read nothing.
 */
export function tcpState(localPort: number, remotePort: number): string | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, state] = line.trim().split(/\s+/);
    if (local?.endsWith(`:${hex(localPort)}`) && remote?.endsWith(`:${hex(remotePort)}`)) return state;
  }
  return undefined;
}
