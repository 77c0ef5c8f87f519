import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback server that answers every request with 204 and keeps its URL: a page's script that ran would reach it. */
export interface RequestRecorder {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The path of every request that arrived, in order. */
  paths: string[];
  close(): Promise<void>;
}

export async function startRequestRecorder(): Promise<RequestRecorder> {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    response.writeHead(204, { 'Access-Control-Allow-Origin': '*' });
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
